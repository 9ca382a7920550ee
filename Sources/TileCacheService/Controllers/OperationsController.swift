import Foundation
import Hummingbird
import ImageCore
import SharedStore

/// `/api/v1/stats`, `/metrics` and `/healthz`.
struct OperationsController: Sendable {
    /// Whose statistics and caches are reported and checked.
    let pipeline: ImagePipeline
    /// Renders `/metrics`.
    let metrics: ServiceMetrics
    /// Checked by `/healthz`.
    let favorites: any FavoritesRepository

    /// The body of `/api/v1/stats`: the pipeline's statistics (see `PipelineReport` for the one definition of hit
    /// rate) and its caches' counters.
    struct Stats: Encodable {
        var requests: Int
        var hitRate: Double
        /// Requests by `ImageOutcome`, of those that led their own lookup or load.
        var outcomes: [String: Int]
        /// Failed loads by `ImageCoreError.Reason`.
        var failures: [String: Int]
        var sharedLoads: SharedLoads
        /// Variants made (resizes).
        var resized: Int
        var bytesDownloaded: Int
        var latencyMilliseconds: [String: LatencySummary]
        /// What the memory tier holds and what it did.
        var memoryCache: MemoryCache<String, CachedImage>.Statistics
        var memoryContent: MemoryContent
        var diskCache: DiskCache.Statistics?
        var diskEntries: Int?
        var diskBytes: Int?
        /// The shared tier's counters, with `--shared-store`.
        var sharedStore: SharedTierStatistics?
    }

    /// GET routes (HEAD comes from the router).
    var routes: RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        routes.get("/api/v1/stats") { _, _ in try JSONResponse.make(await stats()).noStore() }
        routes.get("/metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                     body: .init(byteBuffer: ByteBuffer(string: metrics.render())))
        }
        routes.get("/healthz") { _, _ in try await health() }
        return routes
    }

    private func stats() async -> Stats {
        let report = pipeline.statistics.snapshot
        let (diskEntries, diskBytes) = (await pipeline.diskCache?.count, await pipeline.diskCache?.totalBytes)
        let outcomes = Dictionary(uniqueKeysWithValues: ImageOutcome.allCases.map { ($0.rawValue, report.count(of: $0)) })
        return Stats(requests: report.requests, hitRate: report.hitRate, outcomes: outcomes, failures: report.failures,
                     sharedLoads: report.sharedLoads, resized: report.processed, bytesDownloaded: report.bytesDownloaded,
                     latencyMilliseconds: report.latencyMilliseconds, memoryCache: pipeline.memoryCache.statistics,
                     memoryContent: pipeline.configuration.memoryContent, diskCache: pipeline.diskCache?.statistics,
                     diskEntries: diskEntries, diskBytes: diskBytes,
                     sharedStore: pipeline.sharedTier?.statistics)
    }

    /// 200 when the codecs decode, the cache directory is writable and the database answers; 503 otherwise. A shared
    /// tier that is being skipped makes the status `degraded`, still 200: images are served from local disk and the
    /// origin meanwhile.
    private func health() async throws -> Response {
        var checks: [String: String] = [:]
        checks["codecs"] = await BlockingWork.run { Self.codecsWork() } ? "ok" : "failing"
        if let disk = pipeline.diskCache {
            if let refusal = disk.writeRefusal {
                checks["cache"] = "not writable: \(disk.directory): \(refusal)"
            } else {
                checks["cache"] = access(disk.directory, W_OK) == 0 ? "ok" : "not writable: \(disk.directory)"
            }
        } else {
            checks["cache"] = "disabled (could not be opened)"
        }
        checks["database"] = await favorites.isHealthy() ? "ok" : "failing"
        let healthy = checks.values.allSatisfy { $0 == "ok" }
        let shared = pipeline.sharedTier?.health
        if let shared { checks["sharedStore"] = shared.status == .ok ? "ok" : "degraded: \(shared.reason ?? "unavailable")" }
        let status = !healthy ? "failing" : shared?.status == .degraded ? "degraded" : "ok"
        return try JSONResponse.make(Health(status: status, checks: checks, sharedStore: shared),
                                     status: healthy ? .ok : .serviceUnavailable).noStore()
    }

    /// Encodes and decodes a tiny image through TurboJPEG.
    static func codecsWork() -> Bool {
        let pixels = [UInt8](repeating: 128, count: 8 * 8 * 3)
        guard let jpeg = try? JPEGEncoder.encode(DecodedImage(width: 8, height: 8, pixelFormat: .rgb, pixels: pixels)),
              (try? ImageInspector().validate(jpeg, subject: "healthz")) != nil else { return false }
        return true
    }
}

/// The body of `/healthz`.
struct Health: Encodable {
    /// `ok`, `degraded` (the shared tier is being skipped; still 200) or `failing` (503).
    var status: String
    /// Each check's result: `ok` or what is wrong.
    var checks: [String: String]
    /// The shared tier: its state, store, endpoint, and why and since when it is skipped.
    var sharedStore: SharedTierHealth?
}

extension Response {
    /// The same response marked `Cache-Control: no-store`.
    func noStore() -> Response {
        var copy = self
        copy.headers[.cacheControl] = "no-store"
        return copy
    }
}

import Foundation
import Hummingbird
import ImageCore

/// `/api/v1/stats`, `/metrics` and `/healthz`.
struct OperationsController: Sendable {
    let dependencies: ServiceDependencies

    struct Stats: Encodable {
        var requests: Int
        var hitRate: Double
        var outcomes: [String: Int]
        var failures: [String: Int]
        var sharedLoads: ImageStore.SharedLoads
        var bytesDownloaded: Int
        var latencyMilliseconds: [String: LatencySummary]
        var byteCache: MemoryCache<String, ServedImage>.Statistics
        var pixelCache: MemoryCache<String, CachedImage>.Statistics
        var diskCache: DiskCache.Statistics?
        var diskEntries: Int?
        var diskBytes: Int?
    }

    func register(on routes: inout RouteTable) {
        routes.get("/api/v1/stats") { _, _ in try JSONResponse.make(stats()).noStore() }
        routes.get("/metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                     body: .init(byteBuffer: ByteBuffer(string: dependencies.metrics.render())))
        }
        routes.get("/healthz") { _, _ in try health() }
    }

    private func stats() -> Stats {
        let report = dependencies.pipeline.statistics.snapshot
        let bytes = dependencies.images.bytesCache.statistics
        let outcomes = ["memory": bytes.hits, "diskHit": report.diskHits, "revalidated": report.revalidated,
                        "networkFetch": report.networkFetches]
        // Every image request is answered once: by a cache layer or a load of its own (outcomes, failures), or by
        // another request's load (sharedLoads), which is not a hit.
        let successes = outcomes.values.reduce(0, +)
        let shared = dependencies.images.sharedLoads
        let requests = successes + report.failed + shared.succeeded + shared.failed
        return Stats(requests: requests, hitRate: requests == 0 ? 0 : Double(successes - report.networkFetches) / Double(requests),
                     outcomes: outcomes, failures: report.failures, sharedLoads: shared, bytesDownloaded: report.bytesDownloaded,
                     latencyMilliseconds: report.latencyMilliseconds, byteCache: bytes,
                     pixelCache: dependencies.pipeline.memoryCache.statistics, diskCache: dependencies.pipeline.diskCache?.statistics,
                     diskEntries: dependencies.pipeline.diskCache?.count, diskBytes: dependencies.pipeline.diskCache?.totalBytes)
    }

    /// 200 when the codecs decode, the cache directory is writable and the database answers; 503 otherwise.
    private func health() throws -> Response {
        var checks: [String: String] = [:]
        checks["codecs"] = Self.codecsWork() ? "ok" : "failing"
        if let disk = dependencies.pipeline.diskCache {
            if let refusal = disk.writeRefusal {
                checks["cache"] = "not writable: \(disk.directory): \(refusal)"
            } else {
                checks["cache"] = access(disk.directory, W_OK) == 0 ? "ok" : "not writable: \(disk.directory)"
            }
        } else {
            checks["cache"] = "disabled (could not be opened)"
        }
        checks["database"] = dependencies.favorites.isHealthy() ? "ok" : "failing"
        let healthy = checks.values.allSatisfy { $0 == "ok" }
        return try JSONResponse.make(Health(status: healthy ? "ok" : "failing", checks: checks),
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
    /// `ok` or `failing`.
    var status: String
    /// Each check's result: `ok` or what is wrong.
    var checks: [String: String]
}

extension Response {
    /// The same response marked `Cache-Control: no-store`.
    func noStore() -> Response {
        var copy = self
        copy.headers[.cacheControl] = "no-store"
        return copy
    }
}

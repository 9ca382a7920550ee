// tilecache-demo: prefetches every element image from the built-in origin (offline), cold, warm, then after a
// restart, and prints what each run cost. Stands in for `tilecache prefetch` until the CLI exists.
import Foundation
import ImageCore
import TileCacheOrigin

@main
struct TileCacheDemo {
    static func main() async throws {
        var originConfiguration = OriginServer.Configuration()
        originConfiguration.latency = .milliseconds(20)
        let origin = try await OriginServer.start(originConfiguration)
        await origin.prerender()
        let images = origin.urlBuilder.images(for: ElementCatalogue.standard.elements)
        let urls = images.map(\.url)
        let knownMissing = Set(images.filter(\.isKnownMissing).map(\.url))

        let directory = (ProcessInfo.processInfo.environment["TILECACHE_CACHE_DIR"] ?? "cache") + "/demo"
        try? FileManager.default.removeItem(atPath: directory)
        var configuration = ImagePipeline.Configuration()
        configuration.diskDirectory = directory
        print("TileCache \(TileCacheVersion.string) demo: \(urls.count) catalogue images from the built-in origin at \(origin.baseURL)")
        print("(20 ms latency per response; memory cache \(configuration.memoryCountLimit) entries / "
              + "\(configuration.memoryCostLimit >> 20) MiB; disk cache in \(directory))\n")

        let pipeline = ImagePipeline(configuration: configuration)
        report("run 1: cold (empty caches)", await pipeline.prefetch(urls), knownMissing: knownMissing)
        report("run 2: warm (same process)", await pipeline.prefetch(urls), knownMissing: knownMissing)
        let restarted = ImagePipeline(configuration: configuration)
        report("run 3: after a restart (empty memory, warm disk)", await restarted.prefetch(urls), knownMissing: knownMissing)
        let fits = origin.urlBuilder.images(for: Array(ElementCatalogue.standard.elements.prefix(60)), kinds: [.thumbnail]).map(\.url)
        _ = await restarted.prefetch(fits)
        report("run 4: thumbnails of elements 1-60 again (they fit in memory)", await restarted.prefetch(fits), knownMissing: knownMissing)
        print("Runs 2 and 3 get no memory hits: a scan of 236 images through an LRU cache of 100 entries / 10 MiB evicts")
        print("each image before its turn comes again, so every hit comes from disk. Run 4 shows memory hits when the set fits.")
        print("origin served \(origin.statistics.requests) requests over \(origin.statistics.connectionsAccepted) connections")
        await origin.shutdown()
    }

    static func report(_ title: String, _ run: PrefetchRun, knownMissing: Set<String>) {
        let report = run.report
        let failures = run.results.filter { $0.error != nil }
        let broken = failures.filter { !knownMissing.contains($0.url) }
        let seconds = Double(run.duration.components.seconds) + Double(run.duration.components.attoseconds) / 1e18
        print("== \(title)")
        let rows: [(String, String)] = [
            ("requested", "\(report.requests)"),
            ("succeeded", "\(report.succeeded)"),
            ("expected missing", "\(failures.count - broken.count)"),
            ("broken", "\(broken.count)"),
            ("memory hits", "\(report.memoryHits)"),
            ("disk hits", "\(report.diskHits)"),
            ("revalidated", "\(report.revalidated)"),
            ("network fetches", "\(report.networkFetches)"),
            ("hit rate", String(format: "%.1f%%", report.hitRate * 100)),
            ("bytes downloaded", "\(report.bytesDownloaded)"),
            ("wall time", String(format: "%.3f s", seconds)),
            ("images per second", String(format: "%.0f", Double(report.requests) / max(seconds, 1e-9))),
        ]
        for (name, value) in rows { print("  " + name.padding(toLength: 20, withPad: " ", startingAt: 0) + value) }
        for (outcome, latency) in report.latencyMilliseconds.sorted(by: { $0.key < $1.key }) {
            print("  " + "latency \(outcome)".padding(toLength: 28, withPad: " ", startingAt: 0)
                  + String(format: "p50 %.3f ms  p99 %.3f ms  max %.3f ms  (n=%d)", latency.p50, latency.p99, latency.max, latency.count))
        }
        for failure in broken {
            print("  broken: \(failure.url): \(failure.error!.reason.rawValue): \(failure.error!.message)")
        }
        print()
    }
}

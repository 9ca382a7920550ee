import Foundation
import ImageCore

/// The report of one prefetch run, in the shape `--format json` prints.
public struct PrefetchReport: Sendable, Codable, Equatable {
    /// One failed URL.
    public struct Failure: Sendable, Codable, Equatable {
        /// The URL (or the input line, for invalid input).
        public var url: String
        /// `ImageCoreError.Reason` raw value.
        public var reason: String
        /// What went wrong.
        public var message: String
    }

    /// Which run of `--repeat` this is (1-based).
    public var run: Int
    /// URLs asked for.
    public var requested: Int
    /// Served (from any layer).
    public var succeeded: Int
    /// Failed, other than expected-missing.
    public var failed: Int
    /// Failed where upstream is known to lack the image.
    public var expectedMissing: Int
    /// Skipped as known missing (without `--include-known-missing`).
    public var skippedKnownMissing: Int
    /// Served from memory.
    public var memoryHits: Int
    /// Served from disk.
    public var diskHits: Int
    /// Stale entries confirmed by 304.
    public var revalidated: Int
    /// Downloaded.
    public var networkFetches: Int
    /// (memory + disk + revalidated) / requested.
    public var hitRate: Double
    /// Bytes received from the network.
    public var bytesDownloaded: Int
    /// Wall time.
    public var durationSeconds: Double
    /// Requested / wall time.
    public var imagesPerSecond: Double
    /// Latency percentiles (ms) by outcome.
    public var latencyMilliseconds: [String: LatencySummary]
    /// Every broken URL with its reason.
    public var failures: [Failure]
    /// Expected-missing URLs that failed as expected.
    public var expectedMissingURLs: [String]

    /// Builds the report of `run` over `images` (invalid input lines are failures that were never fetched).
    public init(run number: Int, images: [TargetImage], run: PrefetchRun, skippedKnownMissing: Int) {
        let knownMissing = Set(images.filter(\.isKnownMissing).map(\.url))
        let invalid = images.filter { $0.invalidInput != nil }
        var failures = invalid.map { Failure(url: $0.url, reason: "invalid-input", message: "\($0.origin ?? $0.url): \($0.invalidInput!)") }
        var expected: [String] = []
        for result in run.results {
            guard let error = result.error else { continue }
            if knownMissing.contains(result.url) {
                expected.append(result.url)
            } else {
                failures.append(Failure(url: result.url, reason: error.reason.rawValue, message: error.message))
            }
        }
        let seconds = run.duration.inSeconds
        let report = run.report
        self.run = number
        requested = run.results.count + invalid.count
        succeeded = report.succeeded
        failed = failures.count
        expectedMissing = expected.count
        self.skippedKnownMissing = skippedKnownMissing
        memoryHits = report.memoryHits
        diskHits = report.diskHits
        revalidated = report.revalidated
        networkFetches = report.networkFetches
        hitRate = requested == 0 ? 0 : Double(memoryHits + diskHits + revalidated) / Double(requested)
        bytesDownloaded = report.bytesDownloaded
        durationSeconds = seconds
        imagesPerSecond = seconds > 0 ? Double(requested) / seconds : 0
        latencyMilliseconds = report.latencyMilliseconds
        self.failures = failures
        expectedMissingURLs = expected
    }

    /// The report as aligned text or Markdown.
    func render(_ format: OutputFormat, title: String) -> String {
        var summary = TextTable(headers: ["", title], rightAligned: [1])
        summary.rows = [
            ["requested", "\(requested)"], ["succeeded", "\(succeeded)"], ["failed", "\(failed)"],
            ["expected missing", "\(expectedMissing)"], ["memory hits", "\(memoryHits)"], ["disk hits", "\(diskHits)"],
            ["revalidated", "\(revalidated)"], ["network fetches", "\(networkFetches)"],
            ["hit rate", String(format: "%.1f%%", hitRate * 100)], ["bytes downloaded", ByteSize.format(bytesDownloaded)],
            ["wall time", String(format: "%.3f s", durationSeconds)], ["images per second", String(format: "%.0f", imagesPerSecond)],
        ]
        if skippedKnownMissing > 0 { summary.rows.insert(["skipped (known missing)", "\(skippedKnownMissing)"], at: 4) }
        var text = summary.render(format)
        if !latencyMilliseconds.isEmpty {
            var latency = TextTable(headers: ["outcome", "n", "p50 ms", "p90 ms", "p99 ms", "max ms"], rightAligned: [1, 2, 3, 4, 5])
            for (outcome, value) in latencyMilliseconds.sorted(by: { $0.key < $1.key }) {
                latency.rows.append([outcome, "\(value.count)", String(format: "%.3f", value.p50), String(format: "%.3f", value.p90),
                                     String(format: "%.3f", value.p99), String(format: "%.3f", value.max)])
            }
            text += "\n" + latency.render(format)
        }
        if !failures.isEmpty {
            var broken = TextTable(headers: ["broken URL", "reason", "message"])
            broken.rows = failures.map { [$0.url, $0.reason, $0.message] }
            text += "\n" + broken.render(format)
        }
        return text
    }
}

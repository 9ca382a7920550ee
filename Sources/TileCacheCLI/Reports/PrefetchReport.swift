import Foundation
public import ImageCore
public import SharedStore

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
        /// For an image found in documents (`--extract`): each document and line that uses it; absent otherwise.
        public var usedIn: [ImageUse]?
    }

    /// A URL whose image was found under another spelling (`cesium.jpg` served by `caesium.jpg`): not broken.
    public struct Alias: Sendable, Codable, Equatable {
        /// The URL asked for.
        public var url: String
        /// The URL that served it.
        public var servedBy: String
    }

    /// Which run of `--repeat` this is (1-based).
    public var run: Int
    /// Whether Ctrl-C or SIGTERM stopped the run before every URL finished (`notCompleted` says how many did not).
    public var interrupted: Bool
    /// URLs asked for.
    public var requested: Int
    /// Served (from any layer).
    public var succeeded: Int
    /// Failed (invalid input lines included), other than expected-missing: the run's `PipelineReport.failed`.
    public var failed: Int
    /// Failed where upstream is known to lack the image: the run's `PipelineReport.expectedMissing`.
    public var expectedMissing: Int
    /// Neither succeeded nor failed: cancelled in flight or never started, after an interruption
    /// (`PrefetchRun.notCompleted`). `succeeded + failed + expectedMissing + notCompleted == requested`.
    public var notCompleted: Int
    /// Skipped as known missing (without `--include-known-missing`).
    public var skippedKnownMissing: Int
    /// Served from memory.
    public var memoryHits: Int
    /// Served from disk.
    public var diskHits: Int
    /// Stale entries confirmed by 304.
    public var revalidated: Int
    /// Served from the shared store of a fleet (`--shared-store`).
    public var sharedHits: Int
    /// Downloaded.
    public var networkFetches: Int
    /// The run's `PipelineReport.hitRate`: (memory + disk + revalidated + shared) over the URLs that ended
    /// (succeeded, failed or expected missing; not those not completed, nor invalid input lines, never requested).
    public var hitRate: Double
    /// Bytes received from the network.
    public var bytesDownloaded: Int
    /// Wall time.
    public var durationSeconds: Double
    /// URLs that ended (succeeded, failed or expected missing) / wall time.
    public var imagesPerSecond: Double
    /// Latency percentiles (ms) by outcome (`failure` counts the failed URLs that were fetched, `expectedMissing` the
    /// expected-missing ones; not-completed URLs have none).
    public var latencyMilliseconds: [String: LatencySummary]
    /// Every broken URL with its reason.
    public var failures: [Failure]
    /// Expected-missing URLs that failed as expected.
    public var expectedMissingURLs: [String]
    /// URLs served under another spelling (counted as succeeded).
    public var aliases: [Alias]
    /// What the run could not do without failing an image: images the disk cache did not store, and why.
    public var warnings: [String]
    /// The shared store's state and counters at the end of the run, with `--shared-store`.
    public var sharedStore: SharedStoreReport?
    /// The variants `--sizes` made of the images fetched.
    public var variants: VariantsReport?

    /// What `prefetch --sizes` made: each width in each format, of every image the run fetched.
    public struct VariantsReport: Sendable, Codable, Equatable {
        /// The widths asked for.
        public var widths: [Int]
        /// The formats, `auto` for the service's default (JPEG, PNG for images with alpha).
        public var formats: [String]
        /// Variants asked for (images x widths x formats).
        public var requested: Int
        /// Variants now in the caches.
        public var made: Int
        /// Variants that could not be made, with the reason.
        public var failures: [Failure]

        public init(widths: [Int], formats: [String], run: PrefetchRun) {
            (self.widths, self.formats) = (widths, formats)
            requested = run.results.count + run.notStarted
            made = run.report.succeeded
            failures = run.results.compactMap { result in
                guard case .failed = result.end, let error = result.error else { return nil }
                return Failure(url: result.url, reason: error.reason.rawValue, message: error.message)
            }
        }
    }

    /// Builds the report of `run` over `images` (invalid input lines are failures that were never fetched).
    ///
    /// Every count is the run's, as the pipeline counted each URL (`PrefetchResult.End`): nothing is recounted here.
    ///
    /// - Parameters:
    ///   - interrupted: whether a signal stopped the run (the report says so; the pipeline has already counted the URLs
    ///     cancelled in flight as not completed).
    ///   - diskLimit: the disk cache's size limit, for the warnings when images were too large for it or evicted.
    ///   - diskDirectory: the disk cache's directory, and `diskRefusal` the file system's reason, for the warning when
    ///     writes were refused.
    public init(run number: Int, images: [TargetImage], run: PrefetchRun, skippedKnownMissing: Int, interrupted: Bool = false,
                diskLimit: Int? = nil, diskDirectory: String? = nil, diskRefusal: String? = nil, sharedStore: SharedStoreReport? = nil) {
        let invalid = images.filter { $0.invalidInput != nil }
        let uses = Dictionary(images.filter { !$0.usedIn.isEmpty }.map { ($0.url, $0.usedIn) }, uniquingKeysWith: { first, _ in first })
        var failures = invalid.map {
            Failure(url: $0.url, reason: "invalid-input", message: "\($0.origin ?? $0.url): \($0.invalidInput!)", usedIn: uses[$0.url])
        }
        var expected: [String] = []
        for result in run.results {
            switch result.end {
            case .failed:
                if let error = result.error {
                    failures.append(Failure(url: result.url, reason: error.reason.rawValue, message: error.message, usedIn: uses[result.url]))
                }
            case .expectedMissing: expected.append(result.url)
            case .succeeded, .notCompleted: break
            }
        }
        let seconds = run.duration.inSeconds
        let report = run.report
        self.run = number
        self.interrupted = interrupted
        requested = run.results.count + run.notStarted + invalid.count
        succeeded = report.succeeded
        failed = report.failed + invalid.count
        expectedMissing = report.expectedMissing
        notCompleted = run.notCompleted
        self.skippedKnownMissing = skippedKnownMissing
        memoryHits = report.memoryHits
        diskHits = report.diskHits
        revalidated = report.revalidated
        sharedHits = report.sharedHits
        networkFetches = report.networkFetches
        hitRate = report.hitRate
        bytesDownloaded = report.bytesDownloaded
        durationSeconds = seconds
        imagesPerSecond = seconds > 0 ? Double(report.requests) / seconds : 0
        latencyMilliseconds = report.latencyMilliseconds
        self.failures = failures
        expectedMissingURLs = expected
        aliases = run.results.compactMap { result in result.servedBy.map { Alias(url: result.url, servedBy: $0) } }
        warnings = Self.diskWarnings(run.disk, limit: diskLimit, directory: diskDirectory, refusal: diskRefusal)
        self.sharedStore = sharedStore
        if let statistics = sharedStore?.statistics {
            if statistics.writesFailed > 0 { warnings.append("\(statistics.writesFailed) images not written to the shared store \(sharedStore!.store) (see the log)") }
            if statistics.writesDropped > 0 {
                warnings.append("\(statistics.writesDropped) images not written to the shared store \(sharedStore!.store): it was unavailable or its queue full")
            }
        }
    }

    /// Reads a report, also one logged before `interrupted`, `notCompleted`, `aliases` and `warnings` existed.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        run = try container.decode(Int.self, forKey: .run)
        interrupted = try container.decodeIfPresent(Bool.self, forKey: .interrupted) ?? false
        requested = try container.decode(Int.self, forKey: .requested)
        succeeded = try container.decode(Int.self, forKey: .succeeded)
        failed = try container.decode(Int.self, forKey: .failed)
        expectedMissing = try container.decode(Int.self, forKey: .expectedMissing)
        notCompleted = try container.decodeIfPresent(Int.self, forKey: .notCompleted) ?? 0
        skippedKnownMissing = try container.decode(Int.self, forKey: .skippedKnownMissing)
        memoryHits = try container.decode(Int.self, forKey: .memoryHits)
        diskHits = try container.decode(Int.self, forKey: .diskHits)
        revalidated = try container.decode(Int.self, forKey: .revalidated)
        sharedHits = try container.decodeIfPresent(Int.self, forKey: .sharedHits) ?? 0
        networkFetches = try container.decode(Int.self, forKey: .networkFetches)
        hitRate = try container.decode(Double.self, forKey: .hitRate)
        bytesDownloaded = try container.decode(Int.self, forKey: .bytesDownloaded)
        durationSeconds = try container.decode(Double.self, forKey: .durationSeconds)
        imagesPerSecond = try container.decode(Double.self, forKey: .imagesPerSecond)
        latencyMilliseconds = try container.decode([String: LatencySummary].self, forKey: .latencyMilliseconds)
        failures = try container.decode([Failure].self, forKey: .failures)
        expectedMissingURLs = try container.decode([String].self, forKey: .expectedMissingURLs)
        aliases = try container.decodeIfPresent([Alias].self, forKey: .aliases) ?? []
        warnings = try container.decodeIfPresent([String].self, forKey: .warnings) ?? []
        sharedStore = try container.decodeIfPresent(SharedStoreReport.self, forKey: .sharedStore)
        variants = try container.decodeIfPresent(VariantsReport.self, forKey: .variants)
    }

    /// Images the disk cache did not store or did not keep during the run, in words (`disk` is the run's alone).
    static func diskWarnings(_ disk: DiskCache.Statistics?, limit: Int?, directory: String?, refusal: String?) -> [String] {
        guard let disk else { return [] }
        var warnings: [String] = []
        if disk.tooLarge > 0 {
            let limitText = limit.map { "the disk limit (--disk-bytes), \(ByteSize.format($0))," } ?? "the disk limit"
            let smallest = disk.smallestTooLarge.map { ByteSize.format($0) } ?? "?"
            warnings.append(disk.writes == 0
                ? "nothing could be stored: \(limitText) is smaller than the smallest image, \(smallest)"
                : "\(disk.tooLarge) images not stored: each is larger than \(limitText) the smallest of them \(smallest)")
        }
        if disk.notStoredByRefusal > 0 {
            warnings.append("\(disk.notStoredByRefusal) images not stored: the file system refused writes to \(directory ?? "the disk cache")"
                            + (refusal.map { " (\($0))" } ?? ""))
        }
        if disk.evictions > 0 {
            let limitText = limit.map { "the disk cache's limit (\(ByteSize.format($0)))" } ?? "the disk cache's limit"
            warnings.append("\(limitText) evicted \(disk.evictions) images this run: they will be downloaded again; raise --disk-bytes")
        }
        return warnings
    }

    /// The report as aligned text or Markdown.
    func render(_ format: OutputFormat, title: String) -> String {
        var summary = TextTable(headers: ["", interrupted ? "\(title) (interrupted)" : title], rightAligned: [1])
        summary.rows = [
            ["requested", "\(requested)"], ["succeeded", "\(succeeded)"], ["failed", "\(failed)"],
            ["expected missing", "\(expectedMissing)"], ["memory hits", "\(memoryHits)"], ["disk hits", "\(diskHits)"],
            ["revalidated", "\(revalidated)"], ["network fetches", "\(networkFetches)"],
            ["hit rate", String(format: "%.1f%%", hitRate * 100)], ["bytes downloaded", ByteSize.format(bytesDownloaded)],
            ["wall time", String(format: "%.3f s", durationSeconds)], ["images per second", String(format: "%.0f", imagesPerSecond)],
        ]
        if let sharedStore {
            let statistics = sharedStore.statistics
            summary.rows.insert(["shared hits", "\(sharedHits)"], at: 7)
            summary.rows += [["shared store", "\(sharedStore.store) (\(sharedStore.status.rawValue))"],
                             ["shared reads (hit/miss/corrupt)", "\(statistics.hits)/\(statistics.misses)/\(statistics.corrupt)"],
                             ["shared writes (ok/failed/dropped)", "\(statistics.writes)/\(statistics.writesFailed)/\(statistics.writesDropped)"],
                             ["shared errors", statistics.errors.isEmpty ? "0"
                                : statistics.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")]]
        }
        if let variants {
            summary.rows.append(["variants made", "\(variants.made) of \(variants.requested) (\(variants.widths.map(String.init).joined(separator: ", ")) wide; "
                                 + "\(variants.formats.joined(separator: ", ")))"])
        }
        if skippedKnownMissing > 0 { summary.rows.insert(["skipped (known missing)", "\(skippedKnownMissing)"], at: 4) }
        if interrupted { summary.rows.insert(["not completed (interrupted)", "\(notCompleted)"], at: 4) }
        var text = summary.render(format)
        if !latencyMilliseconds.isEmpty {
            var latency = TextTable(headers: ["outcome", "n", "p50 ms", "p90 ms", "p99 ms", "max ms"], rightAligned: [1, 2, 3, 4, 5])
            for (outcome, value) in latencyMilliseconds.sorted(by: { $0.key < $1.key }) {
                latency.rows.append([outcome, "\(value.count)", String(format: "%.3f", value.p50), String(format: "%.3f", value.p90),
                                     String(format: "%.3f", value.p99), String(format: "%.3f", value.max)])
            }
            text += "\n" + latency.render(format)
        }
        if !aliases.isEmpty {
            var found = TextTable(headers: ["served under another spelling", "from"])
            found.rows = aliases.map { [($0.url as NSString).lastPathComponent + " -> " + ($0.servedBy as NSString).lastPathComponent, $0.servedBy] }
            text += "\n" + found.render(format)
        }
        if !failures.isEmpty {
            // Images from documents also say where they are used (`document:line`).
            let fromDocuments = failures.contains { $0.usedIn != nil }
            var broken = TextTable(headers: ["broken URL", "reason", "message"] + (fromDocuments ? ["used in"] : []))
            broken.rows = failures.map {
                [$0.url, $0.reason, $0.message] + (fromDocuments ? [($0.usedIn ?? []).map(\.description).joined(separator: ", ")] : [])
            }
            text += "\n" + broken.render(format)
        }
        if let variants, !variants.failures.isEmpty {
            var broken = TextTable(headers: ["variant not made", "reason", "message"])
            broken.rows = variants.failures.map { [$0.url, $0.reason, $0.message] }
            text += "\n" + broken.render(format)
        }
        for warning in warnings { text += "\nwarning: \(warning)\n" }
        return text
    }
}

/// The shared store at the end of a run: which, its state, and what it did.
public struct SharedStoreReport: Sendable, Codable, Equatable {
    /// `s3://BUCKET[/PREFIX]`.
    public var store: String
    /// `ok` or `degraded`.
    public var status: SharedTierHealth.Status
    /// Requests, hits, misses, writes, errors by reason, latency.
    public var statistics: SharedTierStatistics

    /// The report of `tier` now.
    public init(_ tier: SharedTier) {
        store = tier.configuration.storeURL
        status = tier.health.status
        statistics = tier.statistics
    }
}

/// The end of one prefetched URL.
public struct PrefetchResult: Sendable {
    /// The URL.
    public var url: String
    /// The other URL (another spelling) that served the image, when `url` itself has none.
    public var servedBy: String?
    /// How it was satisfied, or nil when it failed.
    public var outcome: ImageOutcome?
    /// Why it failed, or nil.
    public var error: ImageCoreError?
    /// Format and size, when it succeeded.
    public var header: ImageHeader?
    /// The final HTTP status, when the load went to the network (see `error.received` for a body that failed).
    public var httpStatus: Int?
    /// Content-Type as the origin served it, when known.
    public var originContentType: String?
    /// Non-fatal findings.
    public var warnings: [String]
    /// Time taken.
    public var latency: Duration
    /// How it ended, as the run's statistics count it.
    public var end: End
}

extension PrefetchResult {
    /// How one prefetched request ended: the one definition of succeeded, failed, expected missing and not completed.
    /// The run's statistics (`PrefetchRun.report`), its progress and every report built from it count by this.
    public enum End: String, Sendable, Hashable, Codable {
        /// An image came back, from any layer.
        case succeeded
        /// It failed, and nothing said it would.
        case failed
        /// It failed, and the caller said upstream is known to lack the image (see `ImagePipeline.prefetch`'s
        /// `expectedMissing`).
        case expectedMissing
        /// It ended with `.cancelled` because the prefetch was cancelled: neither succeeded nor failed.
        case notCompleted

        /// How a request that ended with `error` (nil: it succeeded) counts: `expectedMissing` when upstream is known to
        /// lack its image, `cancelled` when the prefetch was cancelled by then.
        static func of(_ error: ImageCoreError?, expectedMissing: Bool, cancelled: Bool) -> End {
            guard let error else { return .succeeded }
            if cancelled, error.reason == .cancelled { return .notCompleted }
            return expectedMissing ? .expectedMissing : .failed
        }
    }
}

/// Where a prefetch is.
public struct PrefetchProgress: Sendable {
    /// URLs finished (not completed ones included, once cancelled).
    public var done: Int
    /// URLs in all.
    public var total: Int
    /// The run's counts so far, as its report will have them (`succeeded`, `hits`, `failed`, `expectedMissing`,
    /// `notCompleted`; no latencies).
    public var counts: PipelineReport
    /// Time since the prefetch started.
    public var elapsed: Duration

    /// Finished as a hit (memory, disk, revalidated, shared store).
    public var hits: Int { counts.hits }
}

/// The results and statistics of one prefetch.
public struct PrefetchRun: Sendable {
    /// One result per URL started, in the order given (a URL whose load was cancelled fails with `.cancelled`). Loads
    /// do not start in that order (disk-cache misses go first), so after a cancellation the URLs never started may be
    /// missing from anywhere in the list: match results by `url`, not by position.
    public var results: [PrefetchResult]
    /// URLs never started because the prefetch was cancelled first (they are not in `results`).
    public var notStarted: Int
    /// Counts, hit rate, bytes and latencies of this run alone.
    public var report: PipelineReport
    /// URLs that neither succeeded nor failed: cancelled in flight (`report.notCompleted`) or never started.
    public var notCompleted: Int { report.notCompleted + notStarted }
    /// What the disk cache did during the run (writes, refused writes, entries too large for its limit); nil
    /// without a disk cache.
    public var disk: DiskCache.Statistics?
    /// Wall time.
    public var duration: Duration
}

extension ImagePipeline {
    /// Loads every URL (see `prefetch(_:concurrency:expectedMissing:progress:)`), with other URLs of an image, by URL,
    /// tried when the host has none at that URL (see `ImageRequest.alternatives`), each under `addresses`.
    public func prefetch(_ urls: [String], alternatives: [String: [String]] = [:], concurrency: Int? = nil,
                         expectedMissing: Set<String> = [], addresses: AddressRule = .any,
                         progress: (@Sendable (PrefetchProgress) -> Void)? = nil) async -> PrefetchRun {
        await prefetch(urls.map { ImageRequest(url: $0, alternatives: alternatives[$0] ?? [], addresses: addresses) }, concurrency: concurrency,
                       expectedMissing: expectedMissing, progress: progress)
    }

    /// Loads every request through `image(for:)` with a bounded task group: at most `concurrency` loads at once
    /// (default: twice the downloader's transfer limit, so that while some loads decode and store, the transfer limit
    /// is still used in full; the downloader never has more transfers in flight than its limit). Failures are
    /// collected, never thrown. When the calling task is cancelled, no further request is started, loads in flight end
    /// with `.cancelled`, and the run returns what finished. Results keep no pixels or bytes.
    ///
    /// Loads of images the disk cache does not hold start first (see `startOrder`): each waits on the network, and
    /// the disk hits decode meanwhile, instead of a late miss adding its round trip after the last decode. Results are
    /// in the order given all the same.
    ///
    /// Each request is counted once in the run's statistics, as its `PrefetchResult.End` says: a failure of a URL in
    /// `expectedMissing` is expected missing, not failed; a load ended by the cancellation is not completed.
    ///
    /// - Parameters:
    ///   - expectedMissing: URLs upstream is known to lack.
    ///   - progress: called after each request finishes, from the collecting task, with the run's counts so far.
    public func prefetch(_ requests: [ImageRequest], concurrency: Int? = nil, expectedMissing: Set<String> = [],
                         progress: (@Sendable (PrefetchProgress) -> Void)? = nil) async -> PrefetchRun {
        let limit = max(1, concurrency ?? 2 * configuration.downloader.maxConcurrentTransfers)
        let runStatistics = PipelineStatistics()
        let diskBefore = diskCache?.statistics
        let started = ContinuousClock.now
        var results = [PrefetchResult?](repeating: nil, count: requests.count)
        var done = 0
        let order = await startOrder(requests)
        await withTaskGroup(of: (Int, PrefetchResult).self) { group in
            var next = 0
            func addNext() {
                guard next < requests.count, !Task.isCancelled else { return }
                let index = order[next], request = requests[index]
                next += 1
                group.addTask {
                    let begun = ContinuousClock.now
                    do throws(ImageCoreError) {
                        let response = try await self.image(for: request)
                        runStatistics.record(response)
                        return (index, PrefetchResult(url: request.url, servedBy: response.servedBy, outcome: response.outcome, error: nil,
                                                      header: response.header, httpStatus: response.httpStatus,
                                                      originContentType: response.originContentType, warnings: response.warnings,
                                                      latency: response.latency, end: .succeeded))
                    } catch {
                        let latency = ContinuousClock.now - begun
                        // A child task is cancelled only with the prefetch (the group's task).
                        let end = PrefetchResult.End.of(error, expectedMissing: expectedMissing.contains(request.url),
                                                        cancelled: Task.isCancelled)
                        switch end {
                        case .notCompleted: runStatistics.recordNotCompleted()
                        case .expectedMissing: runStatistics.recordExpectedMissing(latency: latency)
                        case .failed, .succeeded: runStatistics.record(error, latency: latency)
                        }
                        return (index, PrefetchResult(url: request.url, outcome: nil, error: error, header: nil, warnings: [], latency: latency,
                                                      end: end))
                    }
                }
            }
            for _ in 0..<min(limit, requests.count) { addNext() }
            for await (index, result) in group {
                results[index] = result
                done += 1
                if let progress {
                    progress(PrefetchProgress(done: done, total: requests.count, counts: runStatistics.counts,
                                              elapsed: ContinuousClock.now - started))
                }
                addNext()
            }
        }
        let finished = results.compactMap { $0 }
        return PrefetchRun(results: finished, notStarted: requests.count - finished.count, report: runStatistics.snapshot,
                           disk: diskBefore.flatMap { before in diskCache?.statistics.since(before) },
                           duration: ContinuousClock.now - started)
    }

    /// The order in which `prefetch` starts `requests` (indices): first those whose URL has no entry in the disk
    /// cache's index (they go to the network, or to an alternative URL), then the rest, each group in the order given.
    /// Without a disk cache, the order given. A guess from the index alone, no file read: a stale entry that must be
    /// revalidated counts as held, an alias as not; either way only the order changes.
    func startOrder(_ requests: [ImageRequest]) async -> [Int] {
        guard let disk = diskCache else { return Array(requests.indices) }
        let keys = requests.map { ImageKey(url: $0.url, addresses: $0.addresses).cacheKey }
        let isHeld = await disk.hasEntries(for: keys)
        var network: [Int] = [], held: [Int] = []
        for index in requests.indices {
            if isHeld[index] { held.append(index) } else { network.append(index) }
        }
        return network + held
    }
}

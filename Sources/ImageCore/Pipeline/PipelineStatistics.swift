import Histogram
import NIOConcurrencyHelpers

/// The pipeline's one set of statistics: counts per outcome, failures per reason, expected-missing images, requests
/// that ended without an answer, requests that shared another request's load, variants made, bytes, and latency
/// histograms (HdrHistogram).
///
/// Every request `ImagePipeline.image(for:)` answers or fails is recorded once; a prefetch records its own run the
/// same way, each request as its `PrefetchResult.End` says. The CLI's reports, the service's
/// `/api/v1/stats` and `/metrics`, and the soak check read `snapshot`; nothing else counts requests.
/// Thread-safety: `record` may be called from any number of tasks at once.
public final class PipelineStatistics: Sendable {
    private struct State {
        var counts: [ImageOutcome: Int] = [:]
        var failures: [ImageCoreError.Reason: Int] = [:]
        var expectedMissing = 0
        var notCompleted = 0
        var shared = SharedLoads()
        var processed = 0
        var bytesDownloaded = 0
        /// Latency histograms by `PipelineReport.latencyMilliseconds` key.
        var histograms: [String: Histogram<UInt64>] = [:]
    }

    private let state = NIOLockedValueBox(State())

    /// Empty statistics.
    public init() {}

    /// Records a success: by its outcome, or as a shared load when it waited for another request's load.
    public func record(_ response: ImageResponse) {
        state.withLockedValue { state in
            if response.shared {
                state.shared.succeeded += 1
            } else {
                state.counts[response.outcome, default: 0] += 1
                if response.processed { state.processed += 1 }
            }
            state.bytesDownloaded += response.bytesDownloaded
            Self.record(response.latency, as: response.outcome.rawValue, in: &state)
        }
    }

    /// Records a failure and the time it took: by its reason, or as a shared load when another request's load failed.
    public func record(_ error: ImageCoreError, latency: Duration, shared: Bool = false) {
        state.withLockedValue { state in
            if shared {
                state.shared.failed += 1
            } else {
                state.failures[error.reason, default: 0] += 1
            }
            Self.record(latency, as: PipelineReport.failureLatencyKey, in: &state)
        }
    }

    /// Records a failure of an image upstream is known to lack (the caller said so beforehand): counted in
    /// `expectedMissing`, not as a failure, and its time under `PipelineReport.expectedMissingLatencyKey`.
    public func recordExpectedMissing(latency: Duration) {
        state.withLockedValue { state in
            state.expectedMissing += 1
            Self.record(latency, as: PipelineReport.expectedMissingLatencyKey, in: &state)
        }
    }

    /// Records a request that ended without an answer because its caller was cancelled (an interrupted prefetch):
    /// neither a success nor a failure, and no latency (the time until the cancellation says nothing of the load).
    public func recordNotCompleted() {
        state.withLockedValue { $0.notCompleted += 1 }
    }

    /// A snapshot.
    public var snapshot: PipelineReport { report(withLatencies: true) }

    /// The counts alone, without the latency percentiles (`latencyMilliseconds` is empty): cheap enough to read after
    /// every request, for a progress line that counts as the final report does.
    public var counts: PipelineReport { report(withLatencies: false) }

    private func report(withLatencies: Bool) -> PipelineReport {
        state.withLockedValue { state in
            var latencies: [String: LatencySummary] = [:]
            for (key, histogram) in state.histograms where withLatencies {
                func milliseconds(_ microseconds: UInt64) -> Double { Double(microseconds) / 1000 }
                latencies[key] = LatencySummary(
                    count: Int(histogram.totalCount),
                    p50: milliseconds(histogram.valueAtPercentile(50)), p90: milliseconds(histogram.valueAtPercentile(90)),
                    p99: milliseconds(histogram.valueAtPercentile(99)), max: milliseconds(histogram.max))
            }
            return PipelineReport(
                memoryHits: state.counts[.memoryHit, default: 0], diskHits: state.counts[.diskHit, default: 0],
                revalidated: state.counts[.revalidated, default: 0], sharedHits: state.counts[.sharedHit, default: 0],
                networkFetches: state.counts[.networkFetch, default: 0],
                failures: Dictionary(uniqueKeysWithValues: state.failures.map { ($0.key.rawValue, $0.value) }),
                expectedMissing: state.expectedMissing, notCompleted: state.notCompleted,
                sharedLoads: state.shared, processed: state.processed,
                bytesDownloaded: state.bytesDownloaded, latencyMilliseconds: latencies)
        }
    }

    private static func record(_ latency: Duration, as key: String, in state: inout State) {
        let (seconds, attoseconds) = latency.components
        let microseconds = UInt64(max(0, seconds)) * 1_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000_000)
        // 1 µs to 1 hour at 3 significant digits.
        _ = state.histograms[key, default: Histogram<UInt64>(highestTrackableValue: 3_600_000_000,
                                                                 numberOfSignificantValueDigits: .three)]
            .record(min(microseconds, 3_600_000_000))
    }
}

/// Latency percentiles of one outcome, in milliseconds.
public struct LatencySummary: Sendable, Hashable, Codable {
    /// Requests measured.
    public var count: Int
    /// Median.
    public var p50: Double
    /// 90th percentile.
    public var p90: Double
    /// 99th percentile.
    public var p99: Double
    /// Largest.
    public var max: Double

    public init(count: Int, p50: Double, p90: Double, p99: Double, max: Double) {
        (self.count, self.p50, self.p90, self.p99, self.max) = (count, p50, p90, p99, max)
    }
}

/// Requests answered by a load another request had started (they waited for it; its outcome is counted once, by the
/// request that led it).
public struct SharedLoads: Sendable, Hashable, Codable {
    /// Requests that got the shared load's image.
    public var succeeded = 0
    /// Requests that got the shared load's failure.
    public var failed = 0

    /// Nothing shared yet.
    public init() {}
}

/// Statistics of a run: counts per outcome, failures per reason, shared loads, hit rate, bytes and latencies.
///
/// **Hit rate**, the one definition: requests answered from a cache (memory, disk, disk revalidated by a 304, or the
/// shared store of a fleet) over
/// all requests recorded, successes and failures alike. A request that waited for another request's load is not a
/// hit (it counts in `requests`, under `sharedLoads`).
///
/// **Failed, expected missing, not completed**, the one definition each, which every report and progress line reads
/// from here: `failed` is every failure (`failures` by reason, and shared loads that failed); `expectedMissing` is a
/// failure of an image upstream is known to lack, never in `failed`; `notCompleted` is a request cancelled with its
/// caller before it ended, neither succeeded nor failed, and not in `requests` (a prefetch's URLs never started are
/// `PrefetchRun.notStarted`; `PrefetchRun.notCompleted` adds them).
public struct PipelineReport: Sendable, Hashable, Codable {
    /// Served from memory.
    public var memoryHits: Int
    /// Served from disk.
    public var diskHits: Int
    /// Stale disk entries confirmed by 304.
    public var revalidated: Int
    /// Served from the shared store of a fleet (and written to local disk).
    public var sharedHits: Int
    /// Downloaded.
    public var networkFetches: Int
    /// Failures by reason (`ImageCoreError.Reason` raw values), of requests that led their load.
    public var failures: [String: Int]
    /// Failures of images upstream is known to lack (a prefetch is told which): not in `failures`.
    public var expectedMissing: Int
    /// Requests cancelled with their caller before they ended (an interrupted prefetch): neither succeeded nor failed.
    public var notCompleted: Int
    /// Requests answered by another request's load.
    public var sharedLoads: SharedLoads
    /// Variants made (resizes), counted once per load that made one.
    public var processed: Int
    /// Bytes received from the network.
    public var bytesDownloaded: Int
    /// The key of failures' latencies in `latencyMilliseconds` (the others are `ImageOutcome` raw values).
    public static let failureLatencyKey = "failure"
    /// The key of expected-missing images' latencies in `latencyMilliseconds`.
    public static let expectedMissingLatencyKey = "expectedMissing"
    /// Latency percentiles by outcome (`memoryHit`, `diskHit`, `revalidated`, `sharedHit`, `networkFetch`, `failure`,
    /// `expectedMissing`); a request not completed has none. The count under `failure` is `failed` less the shared
    /// loads that failed.
    public var latencyMilliseconds: [String: LatencySummary]

    /// Successful requests.
    public var succeeded: Int { hits + networkFetches + sharedLoads.succeeded }
    /// Failed requests (expected-missing ones are not failures).
    public var failed: Int { failures.values.reduce(0, +) + sharedLoads.failed }
    /// All requests that ended: succeeded, failed or expected missing (not the ones not completed).
    public var requests: Int { succeeded + failed + expectedMissing }
    /// Requests answered with `outcome` (of those that led their own lookup or load).
    public func count(of outcome: ImageOutcome) -> Int {
        switch outcome {
        case .memoryHit: memoryHits
        case .diskHit: diskHits
        case .revalidated: revalidated
        case .sharedHit: sharedHits
        case .networkFetch: networkFetches
        }
    }
    /// Requests answered from a cache: memory, disk, revalidated, shared.
    public var hits: Int { memoryHits + diskHits + revalidated + sharedHits }
    /// `hits` over `requests` (see the type's documentation); 0 when there were none.
    public var hitRate: Double { requests == 0 ? 0 : Double(hits) / Double(requests) }
}

import Histogram
import NIOConcurrencyHelpers

/// Counts per outcome, failures per reason, bytes, and latency histograms (HdrHistogram) over a run.
///
/// Thread-safety: `record` may be called from any number of tasks at once.
public final class PipelineStatistics: Sendable {
    private struct State {
        var counts: [ImageOutcome: Int] = [:]
        var failures: [ImageCoreError.Reason: Int] = [:]
        var bytesDownloaded = 0
        /// Latency histograms by outcome; the nil key holds failures.
        var histograms: [ImageOutcome?: Histogram<UInt64>] = [:]
    }

    private let state = NIOLockedValueBox(State())

    /// Empty statistics.
    public init() {}

    /// Records a success.
    public func record(_ response: ImageResponse) {
        record(outcome: response.outcome, latency: response.latency, bytesDownloaded: response.bytesDownloaded)
    }

    /// Records a success by its parts (for layers above the pipeline, such as the service's byte cache).
    public func record(outcome: ImageOutcome, latency: Duration, bytesDownloaded: Int = 0) {
        state.withLockedValue { state in
            state.counts[outcome, default: 0] += 1
            state.bytesDownloaded += bytesDownloaded
            Self.record(latency, as: outcome, in: &state)
        }
    }

    /// Records a failure and the time it took.
    public func record(_ error: ImageCoreError, latency: Duration, bytesDownloaded: Int = 0) {
        state.withLockedValue { state in
            state.failures[error.reason, default: 0] += 1
            state.bytesDownloaded += bytesDownloaded
            Self.record(latency, as: nil, in: &state)
        }
    }

    /// A snapshot.
    public var snapshot: PipelineReport {
        state.withLockedValue { state in
            var latencies: [String: LatencySummary] = [:]
            for (outcome, histogram) in state.histograms {
                func milliseconds(_ microseconds: UInt64) -> Double { Double(microseconds) / 1000 }
                latencies[outcome?.rawValue ?? "failure"] = LatencySummary(
                    count: Int(histogram.totalCount),
                    p50: milliseconds(histogram.valueAtPercentile(50)), p90: milliseconds(histogram.valueAtPercentile(90)),
                    p99: milliseconds(histogram.valueAtPercentile(99)), max: milliseconds(histogram.max))
            }
            return PipelineReport(
                memoryHits: state.counts[.memoryHit, default: 0], diskHits: state.counts[.diskHit, default: 0],
                revalidated: state.counts[.revalidated, default: 0], networkFetches: state.counts[.networkFetch, default: 0],
                failures: Dictionary(uniqueKeysWithValues: state.failures.map { ($0.key.rawValue, $0.value) }),
                bytesDownloaded: state.bytesDownloaded, latencyMilliseconds: latencies)
        }
    }

    private static func record(_ latency: Duration, as outcome: ImageOutcome?, in state: inout State) {
        let (seconds, attoseconds) = latency.components
        let microseconds = UInt64(max(0, seconds)) * 1_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000_000)
        // 1 µs to 1 hour at 3 significant digits.
        _ = state.histograms[outcome, default: Histogram<UInt64>(highestTrackableValue: 3_600_000_000,
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
}

/// Statistics of a run: counts per outcome, failures per reason, hit rate, bytes and latencies.
public struct PipelineReport: Sendable, Hashable, Codable {
    /// Served from memory.
    public var memoryHits: Int
    /// Served from disk.
    public var diskHits: Int
    /// Stale disk entries confirmed by 304.
    public var revalidated: Int
    /// Downloaded.
    public var networkFetches: Int
    /// Failures by reason (`ImageCoreError.Reason` raw values).
    public var failures: [String: Int]
    /// Bytes received from the network.
    public var bytesDownloaded: Int
    /// Latency percentiles by outcome (`memoryHit`, `diskHit`, `revalidated`, `networkFetch`, `failure`).
    public var latencyMilliseconds: [String: LatencySummary]

    /// Successful requests.
    public var succeeded: Int { memoryHits + diskHits + revalidated + networkFetches }
    /// Failed requests.
    public var failed: Int { failures.values.reduce(0, +) }
    /// All requests.
    public var requests: Int { succeeded + failed }
    /// Hits (memory, disk, revalidated) over all requests; 0 when there were none.
    public var hitRate: Double { requests == 0 ? 0 : Double(memoryHits + diskHits + revalidated) / Double(requests) }
}

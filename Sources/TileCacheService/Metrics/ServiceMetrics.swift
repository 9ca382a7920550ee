public import ImageCore
public import SharedStore
import Metrics
public import Prometheus
import NIOConcurrencyHelpers

/// The service's metrics: HTTP requests as swift-metrics objects made by a Prometheus factory over this instance's own
/// registry (no global bootstrap, so tests can build many apps in one process), and the image requests as the
/// pipeline's statistics count them, read when `/metrics` is rendered.
public final class ServiceMetrics: Sendable {
    /// The registry `/metrics` renders.
    public let registry = PrometheusCollectorRegistry()
    /// The pipeline's statistics: the one count of image requests.
    private let statistics: PipelineStatistics
    /// The shared tier, whose counters are rendered beside them.
    private let sharedTier: SharedTier?
    private let factory: PrometheusMetricsFactory
    private let inFlight: Meter
    private let fastPathAnswers: Metrics.Counter
    private let openConnections: Meter
    /// Handles by label and dimensions: making one walks the registry (locks, name validation), so each is made once.
    private let counters = NIOLockedValueBox<[String: Metrics.Counter]>([:])
    private let timers = NIOLockedValueBox<[String: Metrics.Timer]>([:])
    /// The two handles each answered request updates, by route, method and status: found with one hash of the three
    /// (building the string key of `counter(_:_:)` per request cost 4% of serving a cached image).
    private let requestHandles = NIOLockedValueBox<[RequestKey: RequestHandles]>([:])

    private struct RequestKey: Hashable {
        let route: String
        let method: String
        let status: Int
    }

    private struct RequestHandles {
        let count: Metrics.Counter
        let duration: Metrics.Timer
    }

    private func counter(_ label: String, _ dimensions: [(String, String)] = []) -> Metrics.Counter {
        Self.handle(in: counters, label, dimensions) { Metrics.Counter(label: label, dimensions: dimensions, factory: factory) }
    }

    private func timer(_ label: String, _ dimensions: [(String, String)]) -> Metrics.Timer {
        Self.handle(in: timers, label, dimensions) { Metrics.Timer(label: label, dimensions: dimensions, factory: factory) }
    }

    /// The cached handle for a label and dimensions, made on first use.
    private static func handle<Handle>(in cache: borrowing NIOLockedValueBox<[String: Handle]>, _ label: String, _ dimensions: [(String, String)],
                                       make: () -> Handle) -> Handle {
        let key = label + dimensions.map { "|\($0.0)=\($0.1)" }.joined()
        return cache.withLockedValue { handles in
            if let handle = handles[key] { return handle }
            let handle = make()
            handles[key] = handle
            return handle
        }
    }

    /// Metrics with the service's histogram buckets, rendering `statistics` beside them.
    public init(statistics: PipelineStatistics, sharedTier: SharedTier? = nil) {
        self.statistics = statistics
        self.sharedTier = sharedTier
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [.microseconds(100), .microseconds(500), .milliseconds(1), .milliseconds(5),
                                                   .milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(500),
                                                   .seconds(1), .seconds(5), .seconds(30)]
        self.factory = factory
        inFlight = Meter(label: "tilecache_http_requests_in_flight", factory: factory)
        fastPathAnswers = Metrics.Counter(label: "tilecache_http_fast_path_answers_total", factory: factory)
        openConnections = Meter(label: "tilecache_http_connections_open", factory: factory)
    }

    func requestStarted() { inFlight.increment() }

    func requestFinished(route: String, method: String, status: Int, duration: Duration) {
        inFlight.decrement()
        let key = RequestKey(route: route, method: method, status: status)
        let handles = requestHandles.withLockedValue { $0[key] } ?? {
            let handles = RequestHandles(
                count: counter("tilecache_http_requests_total", [("route", route), ("method", method), ("status", String(status))]),
                duration: timer("tilecache_http_request_duration_seconds", [("route", route)]))
            requestHandles.withLockedValue { $0[key] = handles }
            return handles
        }()
        handles.count.increment()
        handles.duration.recordNanoseconds(duration.nanoseconds)
    }

    /// A request answered by the fast path (`CachedImageFastPath`), as well as counted with the others.
    func answeredByFastPath() {
        fastPathAnswers.increment()
    }

    /// A photo request answered 404 by the catalogue's known-missing rule, without a load.
    func knownMissing() {
        counter("tilecache_known_missing_photos_total").increment()
    }

    /// A client connection opened (`true`) or closed.
    func connection(opened: Bool) {
        if opened { openConnections.increment() } else { openConnections.decrement() }
    }

    /// A client connection closed by `ConnectionLimits`: `body-timeout`, `send-timeout`, `shed` (to make room for a
    /// new one) or `refused` (the new one, every other being answered).
    func connectionClosed(reason: String) {
        counter("tilecache_http_connections_closed_total", [("reason", reason)]).increment()
    }

    /// The Prometheus text exposition.
    public func render() -> String {
        Self.withHelp(registry.emitToString() + Self.render(statistics.snapshot)
                      + (sharedTier.map { Self.render($0.statistics, health: $0.health) } ?? ""))
    }

    /// What each metric counts: a `# HELP` line goes before its `# TYPE` line.
    static let help: [String: String] = [
        "tilecache_http_requests_total": "HTTP requests answered, by route, method and status.",
        "tilecache_http_request_duration_seconds": "Time to answer an HTTP request, by route.",
        "tilecache_http_requests_in_flight": "HTTP requests being answered now.",
        "tilecache_http_fast_path_answers_total": "HTTP requests for images in memory answered before the router (also in tilecache_http_requests_total).",
        "tilecache_http_connections_open": "Client connections open now (HTTP/2 connections are not counted).",
        "tilecache_http_connections_closed_total": "Client connections closed by the service's limits, by reason (body-timeout, send-timeout, shed, refused).",
        "tilecache_known_missing_photos_total": "Photo requests answered 404 by the catalogue's rule (no photo for 90 and up), without a load.",
        "tilecache_image_requests_total": "Image requests, by the layer that answered (memory, disk, shared store, network, ...).",
        "tilecache_image_failures_total": "Image requests that failed, by reason.",
        "tilecache_image_shared_loads_total": "Image requests that joined a load already in flight for the same image.",
        "tilecache_image_resized_total": "Variants made (resized, re-encoded) from an original.",
        "tilecache_upstream_bytes_total": "Bytes downloaded from the image hosts.",
        "tilecache_shared_store_up": "1 while the shared store answers, 0 while its circuit is open (reads and writes skipped).",
        "tilecache_shared_store_requests_total": "Requests sent to the shared store.",
        "tilecache_shared_store_reads_total": "Shared store reads, by result (hit, miss, corrupt, skipped).",
        "tilecache_shared_store_writes_total": "Shared store writes, by result.",
        "tilecache_shared_store_errors_total": "Shared store errors, by reason.",
        "tilecache_shared_store_bytes_total": "Bytes read from and written to the shared store, by direction.",
        "tilecache_shared_store_circuit_opened_total": "Times the shared store's circuit breaker opened.",
        "tilecache_shared_store_latency_seconds": "Shared store request latency quantiles.",
    ]

    /// `text` with a `# HELP` line before every `# TYPE` line that lacks one.
    static func withHelp(_ text: String) -> String {
        var lines: [Substring] = []
        var previous: Substring = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# TYPE "), let name = line.split(separator: " ").dropFirst(2).first,
               !previous.hasPrefix("# HELP \(name) ") {
                let help = Self.help[String(name)] ?? "TileCache metric \(name)."
                lines.append(Substring("# HELP \(name) \(help)"))
            }
            lines.append(line)
            previous = line
        }
        return lines.joined(separator: "\n")
    }

    /// The shared tier's counters: requests, hits, misses, corrupt objects, skipped reads, writes by result, errors by
    /// reason, bytes each way, latency, and whether it is up (1) or skipped (0).
    static func render(_ statistics: SharedTierStatistics, health: SharedTierHealth) -> String {
        var text = "# TYPE tilecache_shared_store_up gauge\ntilecache_shared_store_up \(health.status == .ok ? 1 : 0)\n"
        text += "# TYPE tilecache_shared_store_requests_total counter\ntilecache_shared_store_requests_total \(statistics.requests)\n"
        text += "# TYPE tilecache_shared_store_reads_total counter\n"
        for (result, count) in [("hit", statistics.hits), ("miss", statistics.misses), ("corrupt", statistics.corrupt), ("skipped", statistics.skipped)] {
            text += "tilecache_shared_store_reads_total{result=\"\(result)\"} \(count)\n"
        }
        text += "# TYPE tilecache_shared_store_writes_total counter\n"
        for (result, count) in [("ok", statistics.writes), ("failed", statistics.writesFailed), ("dropped", statistics.writesDropped)] {
            text += "tilecache_shared_store_writes_total{result=\"\(result)\"} \(count)\n"
        }
        text += "# TYPE tilecache_shared_store_errors_total counter\n"
        for (reason, count) in statistics.errors.sorted(by: { $0.key < $1.key }) {
            text += "tilecache_shared_store_errors_total{reason=\"\(reason)\"} \(count)\n"
        }
        text += "# TYPE tilecache_shared_store_bytes_total counter\n"
        text += "tilecache_shared_store_bytes_total{direction=\"read\"} \(statistics.bytesRead)\n"
        text += "tilecache_shared_store_bytes_total{direction=\"written\"} \(statistics.bytesWritten)\n"
        text += "# TYPE tilecache_shared_store_circuit_opened_total counter\ntilecache_shared_store_circuit_opened_total \(statistics.circuitOpened)\n"
        if let latency = statistics.latencyMilliseconds {
            text += "# TYPE tilecache_shared_store_latency_seconds gauge\n"
            for (quantile, value) in [("0.5", latency.p50), ("0.9", latency.p90), ("0.99", latency.p99)] {
                text += "tilecache_shared_store_latency_seconds{quantile=\"\(quantile)\"} \(value / 1000)\n"
            }
        }
        return text
    }

    /// The pipeline's counts in the Prometheus text format: requests by outcome, failures by reason, shared loads,
    /// variants made and bytes downloaded, all counters since start.
    static func render(_ report: PipelineReport) -> String {
        var text = "# TYPE tilecache_image_requests_total counter\n"
        for outcome in ImageOutcome.allCases {
            text += "tilecache_image_requests_total{outcome=\"\(outcome.rawValue)\"} \(report.count(of: outcome))\n"
        }
        text += "# TYPE tilecache_image_failures_total counter\n"
        for reason in ImageCoreError.Reason.allCases {
            text += "tilecache_image_failures_total{reason=\"\(reason.rawValue)\"} \(report.failures[reason.rawValue, default: 0])\n"
        }
        text += "# TYPE tilecache_image_shared_loads_total counter\n"
        text += "tilecache_image_shared_loads_total{result=\"ok\"} \(report.sharedLoads.succeeded)\n"
        text += "tilecache_image_shared_loads_total{result=\"failed\"} \(report.sharedLoads.failed)\n"
        text += "# TYPE tilecache_image_resized_total counter\ntilecache_image_resized_total \(report.processed)\n"
        text += "# TYPE tilecache_upstream_bytes_total counter\ntilecache_upstream_bytes_total \(report.bytesDownloaded)\n"
        return text
    }
}

import Metrics
import Prometheus
import NIOConcurrencyHelpers

/// The service's metrics: swift-metrics objects made by a Prometheus factory over this instance's own registry
/// (no global bootstrap, so tests can build many apps in one process).
public final class ServiceMetrics: Sendable {
    /// The registry `/metrics` renders.
    public let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let inFlight: Meter
    /// Handles by label and dimensions: making one walks the registry (locks, name validation), so each is made once.
    private let counters = NIOLockedValueBox<[String: Metrics.Counter]>([:])
    private let timers = NIOLockedValueBox<[String: Metrics.Timer]>([:])

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

    /// Metrics with the service's histogram buckets.
    public init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [.microseconds(100), .microseconds(500), .milliseconds(1), .milliseconds(5),
                                                   .milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(500),
                                                   .seconds(1), .seconds(5), .seconds(30)]
        self.factory = factory
        inFlight = Meter(label: "tilecache_http_requests_in_flight", factory: factory)
    }

    func requestStarted() { inFlight.increment() }

    func requestFinished(route: String, method: String, status: Int, duration: Duration) {
        inFlight.decrement()
        let dimensions = [("route", route), ("method", method), ("status", String(status))]
        counter("tilecache_http_requests_total", dimensions).increment()
        timer("tilecache_http_request_duration_seconds", [("route", route)])
            .recordNanoseconds(duration.nanoseconds)
    }

    /// A lookup answered by a cache layer (`memory`, `diskHit`, `revalidated`) or the network (`networkFetch`).
    func cacheLookup(layer: String) {
        counter("tilecache_image_lookups_total", [("layer", layer)]).increment()
    }

    func upstreamFailure(reason: String) {
        counter("tilecache_upstream_failures_total", [("reason", reason)]).increment()
    }

    /// A request answered by a load another request had started: `result` is `ok` or `failed`.
    func sharedLoad(failed: Bool) {
        counter("tilecache_shared_loads_total", [("result", failed ? "failed" : "ok")]).increment()
    }

    func upstreamBytes(_ bytes: Int) {
        counter("tilecache_upstream_bytes_total").increment(by: bytes)
    }

    func rejected() {
        counter("tilecache_overload_rejections_total").increment()
    }

    /// The Prometheus text exposition.
    public func render() -> String { registry.emitToString() }
}

extension Duration {
    /// Whole nanoseconds.
    var nanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }
}

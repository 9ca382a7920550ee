import Metrics
import Prometheus

/// The service's metrics: swift-metrics objects made by a Prometheus factory over this instance's own registry
/// (no global bootstrap, so tests can build many apps in one process).
public final class ServiceMetrics: Sendable {
    /// The registry `/metrics` renders.
    public let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let inFlight: Meter

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
        Counter(label: "tilecache_http_requests_total", dimensions: dimensions, factory: factory).increment()
        Timer(label: "tilecache_http_request_duration_seconds", dimensions: [("route", route)], factory: factory)
            .recordNanoseconds(Int64(duration.components.seconds) * 1_000_000_000 + Int64(duration.components.attoseconds / 1_000_000_000))
    }

    /// A lookup answered by a cache layer (`memory`, `diskHit`, `revalidated`) or the network (`networkFetch`).
    func cacheLookup(layer: String) {
        Counter(label: "tilecache_image_lookups_total", dimensions: [("layer", layer)], factory: factory).increment()
    }

    func upstreamFailure(reason: String) {
        Counter(label: "tilecache_upstream_failures_total", dimensions: [("reason", reason)], factory: factory).increment()
    }

    func upstreamBytes(_ bytes: Int) {
        Counter(label: "tilecache_upstream_bytes_total", factory: factory).increment(by: bytes)
    }

    func rejected() {
        Counter(label: "tilecache_overload_rejections_total", factory: factory).increment()
    }

    /// The Prometheus text exposition.
    public func render() -> String { registry.emitToString() }
}

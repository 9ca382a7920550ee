import Hummingbird

/// Counts requests by route, method and status, times them, and tracks requests in flight.
struct MetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServiceMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        metrics.requestStarted()
        let started = ContinuousClock.now
        do {
            let response = try await next(request, context)
            metrics.requestFinished(route: context.endpointPath ?? "unmatched", method: request.method.rawValue,
                                    status: Int(response.status.code), duration: ContinuousClock.now - started)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.requestFinished(route: context.endpointPath ?? "unmatched", method: request.method.rawValue,
                                    status: Int(status), duration: ContinuousClock.now - started)
            throw error
        }
    }
}

extension MetricsMiddleware: ServiceMiddleware where Context == BasicRequestContext {
    /// The same counts and timing for an answer the fast path gives (and the count of those answers, first: a reader of
    /// both counters that reads a route's count before the fast path's never sees an answer counted by route and not yet
    /// as the fast path's, so the answers it takes for the router's, a route's count less the fast path's, are never
    /// more than there were).
    func fastPath(_ request: FastRequest, next: (FastRequest) -> FastAnswer?) -> FastAnswer? {
        let started = ContinuousClock.now
        guard let answer = next(request) else { return nil }
        metrics.answeredByFastPath()
        metrics.requestStarted()
        metrics.requestFinished(route: request.route, method: request.head.method.rawValue, status: Int(answer.head.status.code),
                                duration: ContinuousClock.now - started)
        return answer
    }

    /// Adds no field to a fast answer's head.
    func fastPathDecorate(_ head: inout HTTPResponse, for request: FastRequest) {}
    var fastPathDecorationKey: (@Sendable (FastRequest) -> String)? { nil }
}

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

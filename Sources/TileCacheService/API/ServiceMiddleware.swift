import HTTPTypes
import Hummingbird
import NIOCore

/// A request the cached-image fast path may answer: its head, and the template of the image route it matched (what
/// the metrics label it, as the router's `endpointPath`).
struct FastRequest {
    var head: HTTPRequest
    var route: String
}

/// An answer the fast path gives: its head, and the body (nil for HEAD and 304).
struct FastAnswer {
    var head: HTTPResponse
    var body: ByteBuffer?
}

/// A middleware of the service, in the one chain that both the router and the cached-image fast path run.
///
/// `handle(_:context:next:)` is its router half. `fastPath(_:next:)` is the same effect on a request the fast path
/// answers (an image in the memory tier, on the event loop, synchronously): it returns `next`'s answer changed as the
/// router half would change it, or declines, before calling `next`, with nil, and the request then goes to the router
/// untouched. Every middleware of the service conforms, so one added later cannot silently skip the images the fast
/// path answers: it must say what it does there.
protocol ServiceMiddleware: RouterMiddleware where Context == BasicRequestContext {
    func fastPath(_ request: FastRequest, next: (FastRequest) -> FastAnswer?) -> FastAnswer?
}

/// The service's middleware, outside in: added to the router in this order, and run by the fast path in the same
/// order around the image route's fast case.
struct ServiceMiddlewareChain: Sendable {
    let middlewares: [any ServiceMiddleware]

    /// Adds every middleware to `router`, outermost first.
    func add(to router: Router<BasicRequestContext>) {
        func add(_ middleware: some ServiceMiddleware) { router.add(middleware: middleware) }
        for middleware in middlewares { add(middleware) }
    }

    /// The answer `handler` gives `request`, through every middleware's fast-path half; nil when one declines or the
    /// handler has no answer.
    func fastPath(_ request: FastRequest, handler: (FastRequest) -> FastAnswer?) -> FastAnswer? {
        func run(_ index: Int, _ request: FastRequest) -> FastAnswer? {
            guard index < middlewares.count else { return handler(request) }
            return middlewares[index].fastPath(request) { run(index + 1, $0) }
        }
        return run(0, request)
    }
}

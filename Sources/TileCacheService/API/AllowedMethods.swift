import HTTPTypes
import Hummingbird

/// Adds route collections to the router and remembers each path's methods, so that a path answers a method it lacks
/// with 405 and an `Allow` header (as a JSON error) instead of a bare 404. HEAD is allowed wherever GET is: the
/// router is built with `.autoGenerateHeadEndpoints`.
///
/// It is a `RouterMethods`, so `addRoutes(_:)` (Hummingbird's own) goes through it: controllers build plain
/// `RouteCollection`s and know nothing of it.
final class AllowedMethods: RouterMethods {
    typealias Context = BasicRequestContext

    private let router: Router<Context>
    private var methods: [String: Set<HTTPRequest.Method>] = [:]
    private var order: [String] = []

    init(_ router: Router<Context>) { self.router = router }

    @discardableResult func on<Responder: HTTPResponder>(_ path: RouterPath, method: HTTPRequest.Method,
                                                         responder: Responder) -> Self where Responder.Context == Context {
        router.on(path, method: method, responder: responder)
        let key = path.description
        if methods[key] == nil { order.append(key) }
        methods[key, default: []].insert(method)
        if method == .get { methods[key]!.insert(.head) }
        return self
    }

    @discardableResult func add(middleware: any MiddlewareProtocol<Request, Response, Context>) -> Self {
        router.add(middleware: middleware)
        return self
    }

    /// Answers every method a path lacks with 405 and `Allow`. Call once, after the last collection.
    func answerOtherMethods() {
        // TRACE too: it echoes a request (headers and all) back to the caller, which the service never does.
        let all: [HTTPRequest.Method] = [.get, .head, .post, .put, .delete, .patch, .options, .trace]
        for path in order {
            let allowed = methods[path]!
            let allow = all.filter(allowed.contains).map(\.rawValue).joined(separator: ", ")
            for method in all where !allowed.contains(method) {
                router.on(RouterPath(stringLiteral: path), method: method) { request, _ -> Response in
                    throw ServiceError(.methodNotAllowed, reason: .methodNotAllowed,
                                       message: "\(request.method.rawValue) is not allowed on \(request.uri.path); allowed: \(allow)",
                                       headers: [.allow: allow])
                }
            }
        }
    }
}

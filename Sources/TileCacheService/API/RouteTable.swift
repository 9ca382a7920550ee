import HTTPTypes
import Hummingbird

/// Registers routes on the router and remembers each path's methods, so that every route answers HEAD like GET and
/// any other method with 405 and an `Allow` header (as a JSON error), instead of a bare 404.
struct RouteTable {
    typealias Handler = @Sendable (Request, BasicRequestContext) async throws -> Response

    let router: Router<BasicRequestContext>
    private var methods: [String: Set<HTTPRequest.Method>] = [:]
    private var order: [String] = []

    init(_ router: Router<BasicRequestContext>) { self.router = router }

    /// GET `path`, and HEAD with the same headers and no body.
    mutating func get(_ path: RouterPath, _ handler: @escaping Handler) {
        router.get(path, use: handler)
        router.head(path) { request, context in try await handler(request, context).headOnly() }
        record(path, [.get, .head])
    }

    mutating func post(_ path: RouterPath, _ handler: @escaping Handler) {
        router.post(path, use: handler)
        record(path, [.post])
    }

    mutating func put(_ path: RouterPath, _ handler: @escaping Handler) {
        router.put(path, use: handler)
        record(path, [.put])
    }

    mutating func delete(_ path: RouterPath, _ handler: @escaping Handler) {
        router.delete(path, use: handler)
        record(path, [.delete])
    }

    /// Answers every method a path lacks with 405 and `Allow`. Call once, after the last route.
    func finish() {
        let all: [HTTPRequest.Method] = [.get, .head, .post, .put, .delete, .patch, .options]
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

    private mutating func record(_ path: RouterPath, _ added: Set<HTTPRequest.Method>) {
        let key = path.description
        if methods[key] == nil { order.append(key) }
        methods[key, default: []].formUnion(added)
    }
}

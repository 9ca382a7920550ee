import Foundation
import HTTPTypes
import Hummingbird
import ImageCore

/// With `--write-token`, POST, PUT, PATCH and DELETE need `Authorization: Bearer <token>` (401 otherwise); reads stay
/// open. The token is compared through its SHA-256 in constant time, so the time an answer takes says nothing about
/// how much of a guess was right.
struct WriteTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    private let digest: [UInt8]

    init(token: String) { digest = Hashing.sha256(Array(token.utf8)) }

    static var writeMethods: Set<HTTPRequest.Method> { [.post, .put, .patch, .delete] }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard Self.writeMethods.contains(request.method) else { return try await next(request, context) }
        guard let authorization = request.headers[.authorization] else {
            throw Self.refusal(.missingToken, "this service protects writes: send Authorization: Bearer <token> (the token given to --write-token)")
        }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw Self.refusal(.badToken, "Authorization must be 'Bearer <token>'")
        }
        let given = Hashing.sha256(Array(parts[1].trimmingCharacters(in: .whitespaces).utf8))
        guard ConstantTime.equal(given, digest) else {
            throw Self.refusal(.badToken, "the bearer token is not this service's write token")
        }
        return try await next(request, context)
    }

    private static func refusal(_ reason: ServiceError.Reason, _ message: String) -> ServiceError {
        ServiceError(.unauthorized, reason: reason, message: message, headers: [.wwwAuthenticate: "Bearer realm=\"tilecache\""])
    }
}

extension WriteTokenMiddleware: ServiceMiddleware where Context == BasicRequestContext {
    /// Reads need no token; the fast path answers nothing else.
    func fastPath(_ request: FastRequest, next: (FastRequest) -> FastAnswer?) -> FastAnswer? {
        guard !Self.writeMethods.contains(request.head.method) else { return nil }
        return next(request)
    }

    /// Adds no field to a fast answer's head.
    func fastPathDecorate(_ head: inout HTTPResponse, for request: FastRequest) {}
    var fastPathDecorationKey: (@Sendable (FastRequest) -> String)? { nil }
}

import HTTPTypes
import Hummingbird
import Logging

/// Makes every error a JSON body `{"error": {"status", "reason", "message"}}`: unknown routes (404), Hummingbird's
/// own errors (a body too large, a bad request) and anything unexpected (500, details to the log only). The error
/// becomes a response here, so the middleware outside (CORS, the request log and ID) sees it as one.
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ServiceError {
            return try error.response(from: request, context: context)
        } catch {
            return try Self.serviceError(for: error, request: request, context: context).response(from: request, context: context)
        }
    }

    private static func serviceError(for error: any Error, request: Request, context: Context) -> ServiceError {
        switch error {
        case let error as any HTTPResponseError:
            let status = error.status
            if status == .notFound {  // the router's answer when no route matches (handlers throw ServiceError)
                return ServiceError(.notFound, reason: .noRoute, message: "nothing here: \(request.method.rawValue) \(request.uri.path.prefix(200))")
            }
            return ServiceError(status, reason: .status(status), message: status.reasonPhrase.lowercased())
        default:
            context.logger.error("unexpected error", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            return ServiceError(.internalServerError, reason: .internal, message: "the server failed to answer this request")
        }
    }
}

extension JSONErrorMiddleware: ServiceMiddleware where Context == BasicRequestContext {
    /// Nothing: the fast path gives no error answers (a request that would get one goes to the router).
    func fastPath(_ request: FastRequest, next: (FastRequest) -> FastAnswer?) -> FastAnswer? { next(request) }

    /// Adds no field to a fast answer's head.
    func fastPathDecorate(_ head: inout HTTPResponse, for request: FastRequest) {}
    var fastPathDecorationKey: (@Sendable (FastRequest) -> String)? { nil }
}

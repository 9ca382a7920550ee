import Foundation
import HTTPTypes
import Hummingbird
import ImageCore
import NIOCore

/// An error that reaches HTTP: a status and a JSON body `{"error": {"status", "reason", "message"}}`.
///
/// Upstream details (URLs, libcurl messages) go to the log, never into the body.
public struct ServiceError: HTTPResponseError, Sendable, Equatable {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// A stable, machine-readable reason.
    public var reason: String
    /// A sentence for the client.
    public var message: String
    /// Extra headers (Retry-After on 503).
    public var headers: HTTPFields

    /// An error with the given status, reason and message.
    public init(_ status: HTTPResponse.Status, reason: String, message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.reason = reason
        self.message = message
        self.headers = headers
    }

    /// The `error` object of the body.
    private struct Body: Encodable {
        var status: Int
        var reason: String
        var message: String
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try JSONResponse.make(["error": Body(status: Int(status.code), reason: reason, message: message)], status: status)
        for field in headers { response.headers.append(field) }
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// The client-facing error for a failed image load: 404 for upstream 404/410, 504 for timeouts, 503 when
    /// overloaded, 500 when a valid image could not be resized, 502 otherwise.
    static func image(_ error: ImageCoreError) -> ServiceError {
        switch error.reason {
        case .overloaded:
            return ServiceError(.serviceUnavailable, reason: "overloaded", message: "too many images are being fetched; retry shortly",
                                headers: [.retryAfter: "1"])
        case .deadlineExceeded:
            return ServiceError(.gatewayTimeout, reason: "timeout", message: "the image was not ready in time")
        case .processing:
            return ServiceError(.internalServerError, reason: "resize-failed", message: "the image could not be resized")
        case .httpStatus where error.httpStatus == 404 || error.httpStatus == 410:
            return ServiceError(.notFound, reason: "upstream-not-found", message: "the upstream host has no such image")
        case .timeout:
            return ServiceError(.gatewayTimeout, reason: "upstream-timeout", message: "the upstream host did not answer in time")
        case .cancelled:
            return ServiceError(.serviceUnavailable, reason: "cancelled", message: "the request was cancelled")
        default:
            return ServiceError(.badGateway, reason: "upstream-\(error.reason.rawValue)",
                                message: "the upstream host did not provide a valid image (\(error.reason.rawValue))")
        }
    }
}

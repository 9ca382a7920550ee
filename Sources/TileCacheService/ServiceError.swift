import Foundation
public import HTTPTypes
public import Hummingbird
public import ImageCore
import NIOCore

/// An error that reaches HTTP: a status and a JSON body `{"error": {"status", "reason", "message"}}`.
///
/// Upstream details (URLs, libcurl messages) go to the log, never into the body.
public struct ServiceError: HTTPResponseError, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status.
    public var status: HTTPResponse.Status
    /// A stable, machine-readable reason.
    public var reason: Reason
    /// A sentence for the client.
    public var message: String
    /// Extra headers (Retry-After on 503).
    public var headers: HTTPFields

    /// An error with the given status, reason and message.
    public init(_ status: HTTPResponse.Status, reason: Reason, message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.reason = reason
        self.message = message
        self.headers = headers
    }

    /// The message, then the status and reason: what a command prints when it meets the error.
    public var description: String { "\(message) (\(status.code) \(reason.rawValue))" }

    /// The `error` object of the body.
    struct Body: Encodable {
        var status: Int
        var reason: String
        var message: String
    }

    /// The JSON body, as every error answer carries it (also those made before the router, `EarlyRefusal`'s).
    var body: [String: Body] { ["error": Body(status: Int(status.code), reason: reason.rawValue, message: message)] }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try JSONResponse.make(body, status: status)
        for field in headers { response.headers.append(field) }
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// The client-facing error for a failed image load: 404 for upstream 404/410, 504 for timeouts, 503 when
    /// overloaded, 500 when a valid image could not be resized, 502 otherwise.
    static func image(_ error: ImageCoreError) -> ServiceError {
        switch error.reason {
        case .overloaded:
            return ServiceError(.serviceUnavailable, reason: .overloaded, message: "too many images are being fetched; retry shortly",
                                headers: [.retryAfter: "1"])
        case .deadlineExceeded:
            return ServiceError(.gatewayTimeout, reason: .timeout, message: "the image was not ready in time")
        case .processing:
            return ServiceError(.internalServerError, reason: .resizeFailed, message: "the image could not be resized")
        case .outputTooLarge:
            return ServiceError(.badRequest, reason: .outputTooLarge, message: error.message)
        case .httpStatus where error.httpStatus == 404 || error.httpStatus == 410:
            return ServiceError(.notFound, reason: .upstreamNotFound, message: "the upstream host has no such image")
        case .timeout:
            return ServiceError(.gatewayTimeout, reason: .upstreamTimeout, message: "the upstream host did not answer in time")
        case .cancelled:
            return ServiceError(.serviceUnavailable, reason: .cancelled, message: "the request was cancelled")
        case .forbiddenAddress:
            return ServiceError(.notFound, reason: .sourceNotAllowed, message: "the source leads to an address this service does not connect to")
        default:
            return ServiceError(.badGateway, reason: .upstream(error.reason),
                                message: "the upstream host did not provide a valid image (\(error.reason.rawValue))")
        }
    }
}

extension ServiceError {
    /// Why a request failed, as the JSON body's `reason` says it. The raw values are part of the API: never rename them.
    public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // Elements and images.
        public static let unknownElement = Reason(rawValue: "unknown-element")
        public static let noPhoto = Reason(rawValue: "no-photo")
        public static let badWidth = Reason(rawValue: "bad-width")
        public static let badHeight = Reason(rawValue: "bad-height")
        public static let badFit = Reason(rawValue: "bad-fit")
        public static let badDPR = Reason(rawValue: "bad-dpr")
        public static let badQuality = Reason(rawValue: "bad-quality")
        public static let badFormat = Reason(rawValue: "bad-format")
        public static let badEnlarge = Reason(rawValue: "bad-enlarge")
        public static let repeatedParameter = Reason(rawValue: "repeated-parameter")
        public static let outputTooLarge = Reason(rawValue: "output-too-large")
        public static let widthNotAllowed = Reason(rawValue: "width-not-allowed")
        /// An option other than `w`, `dpr` and `format` on a service with `--allowed-widths`.
        public static let optionNotAllowed = Reason(rawValue: "option-not-allowed")
        /// `preset=NAME` names no preset (400).
        public static let unknownPreset = Reason(rawValue: "unknown-preset")
        public static let missingSignature = Reason(rawValue: "missing-signature")
        public static let badSignature = Reason(rawValue: "bad-signature")
        public static let unknownParameter = Reason(rawValue: "unknown-parameter")
        /// An imgproxy or thumbor URL that cannot be read: an unknown option, a bad argument, no source (404, as
        /// imgproxy answers).
        public static let invalidURL = Reason(rawValue: "invalid-url")
        /// A source URL `--allowed-sources` does not allow, or one that leads to an address the service may not
        /// connect to (404, as imgproxy answers).
        public static let sourceNotAllowed = Reason(rawValue: "source-not-allowed")
        public static let resizeFailed = Reason(rawValue: "resize-failed")
        public static let upstreamNotFound = Reason(rawValue: "upstream-not-found")
        public static let upstreamTimeout = Reason(rawValue: "upstream-timeout")
        public static let timeout = Reason(rawValue: "timeout")
        public static let overloaded = Reason(rawValue: "overloaded")
        public static let cancelled = Reason(rawValue: "cancelled")
        /// Any other upstream failure: `upstream-` and the pipeline's reason (`upstream-not-an-image`, ...).
        public static func upstream(_ reason: ImageCoreError.Reason) -> Reason { Reason(rawValue: "upstream-" + reason.rawValue) }

        // List queries.
        public static let badPage = Reason(rawValue: "bad-page")
        public static let badLimit = Reason(rawValue: "bad-limit")
        public static let badOrder = Reason(rawValue: "bad-order")
        public static let badSortBy = Reason(rawValue: "bad-sortBy")

        // Favourites.
        public static let badJSON = Reason(rawValue: "bad-json")
        public static let missingField = Reason(rawValue: "missing-field")
        public static let fieldTooLong = Reason(rawValue: "field-too-long")
        public static let badField = Reason(rawValue: "bad-field")
        public static let elementMismatch = Reason(rawValue: "element-mismatch")
        public static let unknownFavorite = Reason(rawValue: "unknown-favorite")
        public static let bodyTooLarge = Reason(rawValue: "body-too-large")
        /// A body whose framing the parser refused (a malformed chunk size), 400.
        public static let badBody = Reason(rawValue: "bad-body")
        /// A `Transfer-Encoding` other than `chunked` (501).
        public static let unsupportedTransferCoding = Reason(rawValue: "unsupported-transfer-coding")
        public static let database = Reason(rawValue: "database")
        /// A write that would take one person's favourites past `FavoritesQuota` (409).
        public static let favoriteQuota = Reason(rawValue: "favorite-quota")

        /// A write from a page on another origin that `--cors-origin` does not list (403).
        public static let crossOriginWrite = Reason(rawValue: "cross-origin-write")
        /// A body that is not JSON by its `Content-Type` (415).
        public static let badContentType = Reason(rawValue: "bad-content-type")

        // Writes with --write-token.
        public static let missingToken = Reason(rawValue: "missing-token")
        public static let badToken = Reason(rawValue: "bad-token")

        // Routing and the server.
        public static let noRoute = Reason(rawValue: "no-route")
        public static let methodNotAllowed = Reason(rawValue: "method-not-allowed")
        public static let `internal` = Reason(rawValue: "internal")
        /// Hummingbird's own errors: the status's phrase (`content-too-large` for 413, and so on).
        public static func status(_ status: HTTPResponse.Status) -> Reason {
            Reason(rawValue: status.reasonPhrase.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).joined(separator: "-"))
        }
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Gives every request an ID (the client's `X-Request-ID` when it is a sensible one, else a new one), echoes it in the
/// response, adds it to the request's logger, and, when the service logs requests (`-v`, `--log-format json`), logs one
/// line per request: method, path, status, bytes, duration, the cache layer that answered and the ID.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    static var header: HTTPField.Name { HTTPField.Name("X-Request-ID")! }
    /// Log a line per request (at info); otherwise only the ID is handled.
    let logRequests: Bool

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let id = request.headers[Self.header].flatMap(Self.accepted) ?? Self.newID()
        var context = context
        context.logger[metadataKey: "request_id"] = .string(id)
        let started = ContinuousClock.now
        var response = try await next(request, context)
        response.headers[Self.header] = id
        if logRequests {
            let elapsed = ContinuousClock.now - started
            var metadata: Logger.Metadata = [
                "method": .string(request.method.rawValue), "path": .string(String(request.uri.path.prefix(512))),
                "status": .stringConvertible(Int(response.status.code)),
                "duration_ms": .stringConvertible(((Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15) * 1000).rounded() / 1000),
            ]
            if let bytes = response.body.contentLength { metadata["bytes"] = .stringConvertible(bytes) }
            if let source = response.headers[ElementsController.sourceHeader] { metadata["cache"] = .string(source) }
            context.logger.info("request", metadata: metadata)
        }
        return response
    }

    /// A client's ID: 1 to 128 visible ASCII characters (anything else could forge log lines).
    static func accepted(_ value: String) -> String? {
        guard (1...128).contains(value.utf8.count), value.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { return nil }
        return value
    }

    /// 16 random bytes in hex.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(generator.next() as UInt64, radix: 16).leftPadded(to: 16) }.joined()
    }
}

extension String {
    /// The string with zeros in front, up to `width` characters.
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Synchronization

/// Gives every request an ID (the client's `X-Request-ID` when it is a sensible one, else a new one), echoes it in the
/// response, adds it to the request's logger, and, when the service logs requests (`-v`, `--log-format json`), logs one
/// line per request: method, path, status, bytes, duration, the cache layer that answered and the ID.
struct RequestLogMiddleware<Context: RequestContext>: RouterMiddleware {
    /// `X-Request-ID` (made once, in `IDSequence`: every request reads it, and making a name lowercases and checks it).
    static var header: HTTPField.Name { IDSequence.header }
    /// Log a line per request (at info); otherwise only the ID is handled.
    let logRequests: Bool
    /// The logger of requests the fast path answers (the router's come with the request context's).
    let logger: Logger

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let id = Self.requestID(request.headers)
        var context = context
        context.logger[metadataKey: "request_id"] = .string(id)
        let started = ContinuousClock.now
        var response = try await next(request, context)
        response.headers[fields: Self.header] = [Self.field(id)]
        if logRequests {
            Self.log(request.head, status: response.status, headers: response.headers, bytes: response.body.contentLength,
                     elapsed: ContinuousClock.now - started, logger: context.logger)
        }
        return response
    }

    /// The answer's `X-Request-ID`, which HTTP/2 must not add to the connection's HPACK table: every value is new, so
    /// indexing it only evicted the fields every answer repeats (`Cache-Control`, the CORS fields, ...), to be sent as
    /// literals again (issue 35).
    static func field(_ id: String) -> HTTPField {
        var field = HTTPField(name: header, value: id)
        field.indexingStrategy = .avoid
        return field
    }

    /// The client's ID when it is a sensible one, else a new one.
    static func requestID(_ headers: HTTPFields) -> String {
        headers[header].flatMap(accepted) ?? newID()
    }

    /// The request's line: method, path, status, bytes, duration and the cache layer that answered (the ID is in the
    /// logger's metadata).
    static func log(_ request: HTTPRequest, status: HTTPResponse.Status, headers: HTTPFields, bytes: Int?, elapsed: Duration, logger: Logger) {
        var metadata: Logger.Metadata = [
            "method": .string(request.method.rawValue), "path": .string(String((request.path ?? "").prefix(while: { $0 != "?" }).prefix(512))),
            "status": .stringConvertible(Int(status.code)),
            "duration_ms": .stringConvertible(((Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15) * 1000).rounded() / 1000),
        ]
        if let bytes { metadata["bytes"] = .stringConvertible(bytes) }
        if let source = headers[ImagesController.sourceHeader] { metadata["cache"] = .string(source) }
        logger.info("request", metadata: metadata)
    }

    /// A client's ID: 1 to 128 visible ASCII characters (anything else could forge log lines).
    static func accepted(_ value: String) -> String? {
        // Letters, digits and the punctuation IDs are made of (UUIDs, base64, trace IDs): nothing markup or a header
        // parser reads specially.
        guard (1...128).contains(value.utf8.count),
              value.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || "-_.:/+=".utf8.contains($0) })
        else { return nil }
        return value
    }

    /// 32 hex digits, unique in this process and unlikely to repeat across processes: a random 64-bit prefix drawn
    /// once, then a counter scrambled by splitmix64's finalizer (a bijection, so two requests never share an ID). One
    /// atomic add and no system call per request: drawing 16 random bytes per request cost 2.5% of serving a
    /// cached image (two getrandom calls).
    static func newID() -> String {
        let sequence = IDSequence.next.add(1, ordering: .relaxed).newValue
        var mixed = sequence &+ IDSequence.key
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        mixed ^= mixed >> 31
        return String(unsafeUninitializedCapacity: 32) { buffer in
            let digits: StaticString = "0123456789abcdef"
            for (offset, value) in [(0, IDSequence.prefix), (16, mixed)] {
                for index in 0..<16 {
                    buffer[offset + index] = digits.utf8Start[Int((value >> UInt64(60 - 4 * index)) & 0xF)]
                }
            }
            return 32
        }
    }
}

/// The process's request-ID state (`RequestLogMiddleware.newID`), and the header's name.
private enum IDSequence {
    static let header = HTTPField.Name("X-Request-ID")!
    static let prefix = UInt64.random(in: .min ... .max)
    static let key = UInt64.random(in: .min ... .max)
    static let next = Atomic<UInt64>(0)
}

extension String {
    /// The string with zeros in front, up to `width` characters.
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

extension RequestLogMiddleware: ServiceMiddleware where Context == BasicRequestContext {
    /// The same ID, header and log line for an answer the fast path gives.
    func fastPath(_ request: FastRequest, next: (FastRequest) -> FastAnswer?) -> FastAnswer? {
        let started = ContinuousClock.now
        guard var answer = next(request) else { return nil }
        let id = Self.requestID(request.head.headerFields)
        answer.setOwnField(Self.field(id))
        if logRequests {
            var logger = logger
            logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
            logger[metadataKey: "request_id"] = .string(id)
            Self.log(request.head, status: answer.head.status, headers: answer.head.headerFields, bytes: answer.body?.readableBytes,
                     elapsed: ContinuousClock.now - started, logger: logger)
        }
        return answer
    }

    /// The ID is the request's own (`fastPath`): nothing the same for every request.
    func fastPathDecorate(_ head: inout HTTPResponse, for request: FastRequest) {}
    var fastPathDecorationKey: (@Sendable (FastRequest) -> String)? { nil }
}

import Foundation
import CHTTPCompression
import HTTPTypes
import Hummingbird
import ImageCore
import NIOCore

/// HTTP's conventions for the service's text answers (the catalogue's JSON, the web front end, the OpenAPI document,
/// stats and metrics, placeholders): a strong `ETag` of the bytes (or the route's own), `Cache-Control: no-cache` unless the route set one (use the copy,
/// but ask first), 304 for a matching `If-None-Match`, and gzip or br when the client accepts them
/// (`Vary: Accept-Encoding`). Images never pass through here: they are compressed already.
///
/// Each encoded body is kept by its ETag in a small `MemoryCache`, so the same catalogue page or script is compressed
/// once, not on every request.
struct TextResponseMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Bodies shorter than this are sent as they are (the coding's framing would eat the gain).
    static var minimumLength: Int { 256 }
    private let encoded = MemoryCache<String, ByteBuffer>(countLimit: 256, costLimit: 8 * 1024 * 1024)

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        guard request.method == .get || request.method == .head, response.status == .ok,
              let type = response.headers[.contentType], Self.isText(type), response.headers[.contentEncoding] == nil else {
            return response
        }
        let body = try await Self.collect(response.body)
        // A route's own strong ETag is kept (a placeholder's); else the bytes'.
        // The compressed bodies are kept by the bytes' tag either way: a route's ETag does not pin its bytes.
        let bodyTag = Self.tag(of: body)
        let tag = response.headers[.eTag].flatMap(Self.strongTag) ?? bodyTag
        let etag = "\"\(tag)\""
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-cache" }
        response.headers.append(HTTPField(name: .vary, value: "Accept-Encoding"))
        let coding = body.readableBytes >= Self.minimumLength ? ContentCoding.preferred(request.headers[.acceptEncoding]) : nil
        response.headers[.eTag] = coding.map { "\"\(tag)-\($0.rawValue)\"" } ?? etag
        if let condition = request.headers[.ifNoneMatch], Self.matches(condition, tag: tag) {
            var headers = response.headers
            headers[.contentType] = nil
            headers[.contentLength] = nil
            return Response(status: .notModified, headers: headers)
        }
        guard let coding, let compressed = compress(body, tag: bodyTag, coding: coding), compressed.readableBytes < body.readableBytes else {
            response.headers[.eTag] = etag
            response.body = ResponseBody(byteBuffer: body)
            return response
        }
        response.headers[.contentEncoding] = coding.rawValue
        response.body = ResponseBody(byteBuffer: compressed)
        return response
    }

    /// JSON, HTML, JavaScript, CSS, YAML and plain text. Decided on the type's bytes without copying: this runs on
    /// every answer, images included (splitting and lowercasing the header cost 3% of serving a cached image).
    static func isText(_ contentType: String) -> Bool {
        var type = contentType.utf8[...]
        if let semicolon = type.firstIndex(of: UInt8(ascii: ";")) { type = type[..<semicolon] }
        while let first = type.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { type = type.dropFirst() }
        while let last = type.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { type = type.dropLast() }
        /// Whether `candidate` is at `start`, in any case.
        func has(_ candidate: StaticString, at start: Int) -> Bool {
            guard start >= 0, start + candidate.utf8CodeUnitCount <= type.count else { return false }
            return zip(type.dropFirst(start), UnsafeBufferPointer(start: candidate.utf8Start, count: candidate.utf8CodeUnitCount))
                .allSatisfy { lowercased($0) == $1 }
        }
        let count = type.count
        return has("text/", at: 0) || (count == 16 && (has("application/json", at: 0) || has("application/yaml", at: 0)))
            || has("+json", at: count - 5)
    }

    /// An ASCII byte in lower case.
    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    /// Whether `If-None-Match` names this body in any of its codings (`*` matches anything; weak comparison, as
    /// RFC 9110 asks of If-None-Match).
    static func matches(_ condition: String, tag: String) -> Bool {
        condition.split(separator: ",").contains { item in
            var value = item.trimmingCharacters(in: .whitespaces)
            if value == "*" { return true }
            if value.hasPrefix("W/") { value.removeFirst(2) }
            guard value.count >= 2, value.first == "\"", value.last == "\"" else { return false }
            let opaque = value.dropFirst().dropLast()
            return opaque == tag || ContentCoding.allCases.contains { opaque == tag + "-" + $0.rawValue }
        }
    }

    /// The first 128 bits of the body's SHA-256, in hex.
    /// The opaque part of a strong ETag (`"abc"`: `abc`); nil for a weak or malformed one.
    static func strongTag(_ etag: String) -> String? {
        guard etag.count >= 2, etag.first == "\"", etag.last == "\"" else { return nil }
        return String(etag.dropFirst().dropLast())
    }

    static func tag(of body: ByteBuffer) -> String {
        String(DiskCache.sha256Hex(Array(body.readableBytesView)).prefix(32))
    }

    private func compress(_ body: ByteBuffer, tag: String, coding: ContentCoding) -> ByteBuffer? {
        let key = tag + "-" + coding.rawValue
        if let cached = encoded.value(forKey: key) { return cached }
        guard let compressed = coding.compress(body) else { return nil }
        _ = encoded.set(compressed, forKey: key, cost: compressed.readableBytes)
        return compressed
    }

    /// The whole body of a response (these are small: JSON pages, scripts).
    static func collect(_ body: ResponseBody) async throws -> ByteBuffer {
        let collector = Collector()
        try await body.write(collector)
        return collector.buffer
    }

    private final class Collector: ResponseBodyWriter {
        var buffer = ByteBuffer()
        func write(_ part: ByteBuffer) async throws { var part = part; buffer.writeBuffer(&part) }
        func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }
}

/// The content codings the service sends: br (preferred at equal weight) and gzip.
enum ContentCoding: String, CaseIterable, Sendable {
    case br, gzip

    /// The coding `Accept-Encoding` prefers, by its q-values (RFC 9110 §12.5.3); nil for identity.
    static func preferred(_ acceptEncoding: String?) -> ContentCoding? {
        guard let acceptEncoding else { return nil }
        var weights: [String: Double] = [:]
        for item in acceptEncoding.split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let name = parts.first, !name.isEmpty else { continue }
            var weight = 1.0
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                weight = Double(parameter.dropFirst(2)) ?? 0
            }
            weights[name] = min(1, max(0, weight))
        }
        let ranked = allCases.map { ($0, weights[$0.rawValue] ?? weights["*"] ?? 0) }.filter { $0.1 > 0 }
        // br before gzip when the weights are equal (allCases' order; max(by:) keeps the first of equals).
        return ranked.max { $0.1 < $1.1 }?.0
    }

    /// The body in this coding; nil if the library fails (then it is sent as it is).
    func compress(_ body: ByteBuffer) -> ByteBuffer? {
        let input = Array(body.readableBytesView)
        let capacity = self == .gzip ? tc_gzip_bound(input.count) : tc_brotli_bound(input.count)
        guard capacity > 0 else { return nil }
        var output = [UInt8](repeating: 0, count: capacity)
        var length = capacity
        let succeeded = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { source in
                switch self {
                case .gzip: tc_gzip(source.baseAddress, source.count, out.baseAddress, &length, 6) == 0
                case .br: tc_brotli(source.baseAddress, source.count, out.baseAddress, &length, 5) == 1
                }
            }
        }
        guard succeeded, length <= capacity else { return nil }
        return ByteBuffer(bytes: output[..<length])
    }
}

extension TextResponseMiddleware: ServiceMiddleware where Context == BasicRequestContext {
    /// Nothing: the fast path answers images only (a placeholder, which is text, goes to the router and through here),
    /// which this middleware leaves as they are.
    func fastPath(_ request: FastRequest, next: (FastRequest) -> FastAnswer?) -> FastAnswer? { next(request) }

    /// Adds no field to a fast answer's head.
    func fastPathDecorate(_ head: inout HTTPResponse, for request: FastRequest) {}
    var fastPathDecorationKey: (@Sendable (FastRequest) -> String)? { nil }
}

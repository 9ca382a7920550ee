import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import NIOHTTPTypes
import NIOHTTPTypesHTTP2
import Testing
@testable import TileCacheService

/// The fast path answers an HTTP/2 request on the connection, from its HEADERS frame (`CachedImageFastPath
/// .StreamAnswerer`), where a stream channel's HTTPTypes codec (swift-nio-extras' `HTTP2FramePayloadToHTTPServerCodec`)
/// converted the request and the answer before. The conversions must be the codec's: the reference here is the codec
/// itself, in an `EmbeddedChannel`, reading the same HEADERS frame and writing the same answer.
@Suite("Service: HTTP/2 requests and answers converted as the stream's HTTPTypes codec converts them")
struct HTTP2ConversionTests {
    /// The request the codec reads from a HEADERS frame with `headers` that ends its stream.
    static func codecRequest(_ headers: HPACKHeaders) throws -> HTTPRequest? {
        let channel = EmbeddedChannel(handler: HTTP2FramePayloadToHTTPServerCodec())
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        try channel.writeInbound(HTTP2Frame.FramePayload.headers(.init(headers: headers, endStream: true)))
        guard case .head(let request) = try channel.readInbound(as: HTTPRequestPart.self) else { return nil }
        return request
    }

    /// The fields of `headers` with their indexing, in order.
    static func fields(_ headers: HPACKHeaders) -> [String] {
        headers.map { "\($0.name): \($0.value) (\($0.indexable))" }
    }

    /// Every field of `request` (pseudo-header fields first) with its indexing strategy, in order.
    static func fields(_ request: HTTPRequest) -> [String] {
        let pseudo = [request.pseudoHeaderFields.method] + [request.pseudoHeaderFields.scheme, request.pseudoHeaderFields.authority,
                                                            request.pseudoHeaderFields.path, request.pseudoHeaderFields.extendedConnectProtocol]
            .compactMap { $0 }
        return (pseudo + Array(request.headerFields)).map { "\($0.name.rawName): \($0.value) (\($0.indexingStrategy))" }
    }

    @Test("requests the fast path may answer: the codec's request, field by field, indexing kept")
    func requests() throws {
        let cases: [HPACKHeaders] = [
            [":method": "GET", ":scheme": "https", ":authority": "tiles.example:8443", ":path": "/api/v1/elements/26/thumbnail",
             "accept": "image/avif,image/webp,*/*", "user-agent": "h2load nghttp2/1.52.0"],
            [":method": "HEAD", ":scheme": "https", ":path": "/periodictable/Tiles/026/s7.JPG?w=64"],
            [":method": "GET", ":path": "/x", ":scheme": "http", "cookie": "a=1", "cookie": "b=2", "if-none-match": "\"e\""],
            [":method": "POST", ":scheme": "https", ":authority": "t", ":path": "/api/v1/favorites", "content-type": "application/json"],
            [":method": "GET", ":scheme": "https", ":path": "/", "bad name": "dropped by both", "x-after": "kept"],
        ]
        var indexed = cases
        // The same with each field's indexing as a client may send it: HPACK's never-indexed and not-indexed literals.
        for index in indexed.indices {
            var headers = HPACKHeaders()
            for (offset, field) in indexed[index].enumerated() {
                headers.add(name: field.name, value: field.value, indexing: [.indexable, .nonIndexable, .neverIndexed][offset % 3])
            }
            indexed[index] = headers
        }
        for headers in cases + indexed {
            let ours = try #require(HTTPRequest(fastPathHeaders: headers), "\(headers)")
            let codec = try #require(try Self.codecRequest(headers))
            #expect(ours == codec, "\(headers)")
            #expect(Self.fields(ours) == Self.fields(codec), "\(headers)")
        }
    }

    @Test("requests left to a stream channel (nil): CONNECT, an extended CONNECT, a pseudo-header field missing, repeated, unknown or after a regular field")
    func leftToTheStream() {
        let cases: [HPACKHeaders] = [
            [":method": "CONNECT", ":authority": "t:443"],
            [":method": "CONNECT", ":protocol": "websocket", ":scheme": "https", ":authority": "t", ":path": "/ws"],
            [":method": "GET", ":scheme": "https", ":authority": "t"],
            [":method": "GET", ":authority": "t", ":path": "/"],
            [":scheme": "https", ":authority": "t", ":path": "/"],
            [":method": "GET", ":scheme": "https", ":path": "/", ":path": "/again"],
            [":method": "GET", ":scheme": "https", ":path": "/", ":status": "200"],
            [":method": "GET", ":scheme": "https", "accept": "*/*", ":path": "/"],
            [":method": "G E T", ":scheme": "https", ":path": "/"],
        ]
        for headers in cases { #expect(HTTPRequest(fastPathHeaders: headers) == nil, "\(headers)") }
    }

    @Test("an answer's head: the HEADERS the codec writes for its whole head, field by field, indexing kept")
    func answers() throws {
        var requestID = HTTPField(name: HTTPField.Name("X-Request-ID")!, value: "3f2a9c0e1b7d4a65")
        requestID.indexingStrategy = .avoid
        var secret = HTTPField(name: HTTPField.Name("X-Secret")!, value: "never")
        secret.indexingStrategy = .disallow
        let heads: [HTTPResponse] = [
            HTTPResponse(status: .ok, headerFields: [.contentType: "image/jpeg", .contentLength: "6283", .cacheControl: "public, max-age=86400",
                                                     .eTag: "\"9c1e\"", HTTPField.Name("X-TileCache-Source")!: "memory", .vary: "Accept"]),
            HTTPResponse(status: .notModified, headerFields: [.eTag: "\"9c1e\"", .cacheControl: "public, max-age=86400"]),
            HTTPResponse(status: .init(code: 299, reasonPhrase: "Odd"), headerFields: HTTPFields([secret])),
        ]
        for head in heads {
            var answer = FastAnswer(head: head, body: ByteBuffer(string: "body"))
            answer.setOwnField(requestID)
            answer.ownFields.append(HTTPField(name: .date, value: "Wed, 02 Dec 2026 13:00:00 GMT"))
            answer.ownFields.append(HTTPField(name: .server, value: "TileCache"))
            let channel = EmbeddedChannel(handler: HTTP2FramePayloadToHTTPServerCodec())
            defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
            try channel.writeOutbound(HTTPResponsePart.head(answer.wholeHead))
            guard case .headers(let written) = try channel.readOutbound(as: HTTP2Frame.FramePayload.self) else {
                Issue.record("no HEADERS from the codec")
                continue
            }
            #expect(Self.fields(HPACKHeaders(fastAnswer: answer)) == Self.fields(written.headers), "\(head)")
        }
    }
}

import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
import NIOHTTPTypesHTTP1
import Testing
@testable import TileCacheService

/// The fast path's server encodes every HTTP/1 answer itself (`HTTP1ResponseEncoder`, in `CachedImageFastPath.Handler`
/// where NIO's `HTTPResponseEncoder` was), and writes its own answers' heads from bytes kept with a remembered answer
/// (`FastAnswer.http1Head`). Both must be the bytes NIO's encoder writes, as `configureHTTPServerPipeline` sets it up
/// (paired with the request decoder, which gives it each request's method): the reference here is that pipeline, in
/// an `EmbeddedChannel`, reading a request and writing the same answer.
@Suite("Service: HTTP/1 answers are the bytes NIO's encoder writes")
struct HTTP1ResponseEncoderTests {
    /// What is written for an answer: its bytes, and how many of its parts were refused (a body part in an answer to
    /// HEAD or CONNECT fails its promise).
    struct Written: Equatable {
        var bytes: [UInt8] = []
        var refused = 0
    }

    /// What NIO's server pipeline writes for `parts` after reading a request with `method` (nil: none read).
    static func nio(_ parts: [HTTPServerResponsePart], answering method: HTTPMethod?) throws -> Written {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
        if let method {
            let target = method == .CONNECT ? "t:443" : "/"  // (CONNECT's target is an authority)
            try channel.writeInbound(ByteBuffer(string: "\(method.rawValue) \(target) HTTP/1.1\r\nHost: t\r\n\r\n"))
        }
        var written = Written()
        for part in parts {
            do {
                try channel.writeOutbound(part)
            } catch let error as NIOHTTPResponseEncoderError where error == .responseBodyNotAllowed {
                written.refused += 1
            }
        }
        while let data = try channel.readOutbound(as: IOData.self) {
            guard case .byteBuffer(let buffer) = data else { Issue.record("a file region"); break }
            written.bytes += buffer.readableBytesView
        }
        return written
    }

    /// Whether a promise failed as NIO's encoder fails a body part it refuses.
    final class Refused { var yes = false }

    /// What `HTTP1ResponseEncoder` writes for `parts`, answering a request with `method`.
    static func ours(_ parts: [HTTPServerResponsePart], answering method: HTTPMethod?) -> Written {
        var encoder = HTTP1ResponseEncoder()
        var written = Written()
        let loop = EmbeddedEventLoop()
        let collect: (IOData, EventLoopPromise<Void>?) -> Void = { data, promise in
            if case .byteBuffer(let buffer) = data { written.bytes += buffer.readableBytesView }
            promise?.succeed()
        }
        if let method { encoder.record(method) }
        for part in parts {
            switch part {
            case .head(let head):
                encoder.write(head: head, allocator: ByteBufferAllocator(), promise: nil, collect)
            case .body(let body):
                let promise = loop.makePromise(of: Void.self)
                encoder.write(body: body, allocator: ByteBufferAllocator(), promise: promise, collect)
                let refused = Refused()
                promise.futureResult.assumeIsolated().whenFailure { refused.yes = $0 as? NIOHTTPResponseEncoderError == .responseBodyNotAllowed }
                loop.run()
                if refused.yes { written.refused += 1 }
            case .end(let trailers):
                encoder.write(end: trailers, allocator: ByteBufferAllocator(), promise: nil, collect)
            }
        }
        return written
    }

    static let headerLists: [HTTPHeaders] = [
        [:],
        ["Content-Length": "3"],
        ["Transfer-Encoding": "chunked"],
        ["content-length": "3", "Transfer-Encoding": "chunked", "X-Kept": "a b"],
        ["Connection": "close", "ETag": "\"x\"", "Content-Type": "image/jpeg"],
    ]
    static let bodies: [[String]] = [[], ["abc"], ["ab", "", "c"]]
    static let trailerLists: [HTTPHeaders?] = [nil, ["Trailer-Field": "v"]]
    static let methods: [HTTPMethod?] = [nil, .GET, .HEAD, .CONNECT, .POST]

    static func parts(_ status: HTTPResponseStatus, version: HTTPVersion, headers: HTTPHeaders, body: [String],
                      trailers: HTTPHeaders?) -> [HTTPServerResponsePart] {
        [.head(HTTPResponseHead(version: version, status: status, headers: headers))]
            + body.map { .body(.byteBuffer(ByteBuffer(string: $0))) } + [.end(trailers)]
    }

    @Test("the same bytes for each status, version, method, framing field, body and trailers")
    func sameAsNIO() throws {
        let statuses: [HTTPResponseStatus] = [.continue, .switchingProtocols, .init(statusCode: 103), .ok, .noContent, .partialContent,
                                              .notModified, .notFound, .internalServerError,
                                              .init(statusCode: 299, reasonPhrase: "Odd"), .init(statusCode: 200, reasonPhrase: "Fine")]
        for status in statuses {
            for version in [HTTPVersion.http1_0, .http1_1] {
                for headers in Self.headerLists {
                    for body in Self.bodies {
                        for trailers in Self.trailerLists {
                            for method in Self.methods {
                                let parts = Self.parts(status, version: version, headers: headers, body: body, trailers: trailers)
                                #expect(Self.ours(parts, answering: method) == (try Self.nio(parts, answering: method)),
                                        "\(status) \(version) \(headers) \(body) \(String(describing: trailers)) \(String(describing: method))")
                            }
                        }
                    }
                }
            }
        }
    }

    @Test("every status code's line, with and without a body")
    func everyStatusCode() throws {
        for code in 100...599 {
            for version in [HTTPVersion.http1_0, .http1_1] {
                let parts = Self.parts(HTTPResponseStatus(statusCode: code), version: version, headers: ["X": "y"], body: ["abc"], trailers: nil)
                #expect(Self.ours(parts, answering: .GET) == (try Self.nio(parts, answering: .GET)), "\(code) \(version)")
            }
        }
    }

    @Test("an informational answer does not take the request's method: the final answer to a HEAD still has no body")
    func informationalThenFinal() throws {
        let parts: [HTTPServerResponsePart] = [.head(HTTPResponseHead(version: .http1_1, status: .continue)),
                                               .head(HTTPResponseHead(version: .http1_1, status: .ok)),
                                               .body(.byteBuffer(ByteBuffer(string: "abc"))), .end(nil)]
        let ours = Self.ours(parts, answering: .HEAD)
        #expect(ours == (try Self.nio(parts, answering: .HEAD)))
        #expect(!String(decoding: ours.bytes, as: UTF8.self).contains("abc") && ours.refused == 1)
    }

    /// A fast answer's head, written from the bytes a remembered answer keeps or made for it, against NIO's encoding of
    /// `HTTPResponseHead(wholeHead)` (what the fast path wrote through NIO's encoder before).
    @Test("a fast answer's head: its kept bytes and its own fields, as NIO encodes the whole head")
    func fastAnswerHead() throws {
        let fields = HTTPFields([HTTPField(name: .contentType, value: "image/jpeg"), HTTPField(name: .contentLength, value: "3"),
                                  HTTPField(name: .eTag, value: "\"e\""), HTTPField(name: HTTPField.Name("X-Cache")!, value: "memory"),
                                  HTTPField(name: .accessControlAllowOrigin, value: "*")])
        for status in [HTTPResponse.Status.ok, .partialContent, .notModified, .init(code: 299, reasonPhrase: "Odd")] {
            for kept in [true, false] {
                var answer = FastAnswer(head: HTTPResponse(status: status, headerFields: fields), body: nil)
                if kept { answer.encodedHead = FastAnswer.encoded(answer.head) }
                answer.ownFields = [HTTPField(name: HTTPField.Name("X-Request-ID")!, value: "r1"), HTTPField(name: .date, value: "Tue, 01 Dec 2026 00:00:00 GMT"),
                                    HTTPField(name: .server, value: "TileCache/test")]
                var written = answer.http1Head(allocator: ByteBufferAllocator())
                let reference = try Self.nio([.head(HTTPResponseHead(answer.wholeHead))], answering: .GET)
                #expect(written.readBytes(length: written.readableBytes) == reference.bytes, "\(status) kept: \(kept)")
            }
        }
        // Only a head the encoder writes as it is is kept: a 304 drops its Content-Length, a head without one is chunked.
        #expect(FastAnswer.encoded(HTTPResponse(status: .notModified, headerFields: fields)) == nil)
        #expect(FastAnswer.encoded(HTTPResponse(status: .ok, headerFields: HTTPFields([HTTPField(name: .contentType, value: "image/jpeg")]))) == nil)
        #expect(FastAnswer.encoded(HTTPResponse(status: .ok, headerFields: fields)) != nil)
    }

    @Test("a kept head is dropped when the head changes")
    func keptHeadDropped() {
        var answer = FastAnswer(head: HTTPResponse(status: .ok, headerFields: HTTPFields([HTTPField(name: .contentLength, value: "3")])), body: nil)
        answer.encodedHead = FastAnswer.encoded(answer.head)
        #expect(answer.encodedHead != nil)
        answer.setOwnField(HTTPField(name: .contentLength, value: "4"))
        #expect(answer.encodedHead == nil)
    }
}

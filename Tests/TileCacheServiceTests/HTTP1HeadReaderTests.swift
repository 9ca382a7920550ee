import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
import PropertyBased
import Testing
@testable import TileCacheService

/// The fast path reads HTTP/1 request heads in a strict subset itself, before NIO's decoder (`HTTP1StrictHead`,
/// `CachedImageFastPath.HeadReader`). The decoder (llhttp) is the reference: for every head the subset accepts, it must
/// read the same request (as Hummingbird's HTTPTypes codec gives it to the router) and end it at the same byte, and a
/// head the subset calls incomplete must be one the decoder has not finished either. The heads are generated
/// (swift-property-based: request lines, header lines and line ends, right and wrong, shrunk to the smallest failing
/// input), and taken from what real clients send.
@Suite("Service: the fast path's HTTP/1 head reader reads what NIO's decoder reads")
struct HTTP1HeadReaderTests {
    static let limits = HTTP1StrictHead.Limits(maxHeaderFieldSize: 80 * 1024, maxHeaderListSize: 80 * 1024, maxHeaderFieldCount: 1000)

    /// What NIO's decoder reads from `bytes`, as Hummingbird's `HTTP1Channel` sets it up: its parts, and whether it
    /// failed.
    static func decoded(_ bytes: [UInt8]) -> (parts: [HTTPServerRequestPart], failed: Bool) {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        let failed = (try? channel.writeInbound(buffer)) == nil
        var parts: [HTTPServerRequestPart] = []
        while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) { parts.append(part) }
        return (parts, failed)
    }

    static func read(_ bytes: [UInt8]) -> HTTP1StrictHead.Reading {
        bytes.withUnsafeBytes { HTTP1StrictHead.read($0, limits: limits) }
    }

    static let next = Array("GET /next HTTP/1.1\r\nHost: n\r\n\r\n".utf8)

    /// Checks the reader's reading of `bytes` against the decoder's; returns it.
    @discardableResult
    static func check(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> HTTP1StrictHead.Reading {
        let reading = read(bytes)
        let shown = String(decoding: bytes, as: UTF8.self).debugDescription
        switch reading {
        case .head(let request, let length):
            // The same request, ended at the same byte: the decoder reads the head and its end from the head's bytes,
            // and the next request from the bytes after them.
            let decoded = Self.decoded(Array(bytes[..<length]) + next)
            #expect(!decoded.failed, "the decoder failed on \(shown)", sourceLocation: sourceLocation)
            guard decoded.parts.count == 4, case .head(let head) = decoded.parts[0], case .end(nil) = decoded.parts[1],
                  case .head(let nextHead) = decoded.parts[2], case .end(nil) = decoded.parts[3] else {
                Issue.record("the decoder read \(decoded.parts) from \(shown)", sourceLocation: sourceLocation)
                return reading
            }
            #expect(CachedImageFastPath.Handler.request(head) == request, "\(shown)", sourceLocation: sourceLocation)
            #expect(nextHead.uri == "/next", "\(shown)", sourceLocation: sourceLocation)
            #expect(head.version == .http1_1 && !head.headers.contains(name: "content-length")
                    && !head.headers.contains(name: "transfer-encoding"), "\(shown)", sourceLocation: sourceLocation)
            // Every shorter start of it is incomplete, not another head.
            for end in 0..<length {
                #expect(read(Array(bytes[..<end])) == .incomplete, "\(end) bytes of \(shown)", sourceLocation: sourceLocation)
            }
        case .incomplete:
            // The decoder has not read a whole head from these bytes either (it may already have failed).
            let decoded = Self.decoded(bytes)
            #expect(!decoded.parts.contains { if case .head = $0 { true } else { false } }, "\(shown)", sourceLocation: sourceLocation)
        case .outside:
            break  // the decoder's to read, as it was before the reader
        }
        return reading
    }

    // The generated heads: a request line, header lines and an end, each picked from pieces that are right, nearly
    // right and wrong in the ways llhttp and the subset may differ on.
    static let requestLines = [
        "GET / HTTP/1.1\r\n", "HEAD / HTTP/1.1\r\n", "GET /api/v1/elements/26/thumbnail?w=64&format=webp HTTP/1.1\r\n",
        "GET /unsafe/300x200/smart/http%3A%2F%2Fexample.com%2Fa.jpg HTTP/1.1\r\n", "GET /a#frag HTTP/1.1\r\n",
        "GET /!$&'()*+,;=:@-._~ HTTP/1.1\r\n", "GET /\"<>[]\\^`{|} HTTP/1.1\r\n", "GET //x HTTP/1.1\r\n", "GET /? HTTP/1.1\r\n",
        "POST / HTTP/1.1\r\n", "get / HTTP/1.1\r\n", "GET  / HTTP/1.1\r\n", "GET / HTTP/1.0\r\n", "GET / HTTP/1.1\n",
        "GET / HTTP/1.1 \r\n", "GET /\t HTTP/1.1\r\n", "GET http://t/ HTTP/1.1\r\n", "GET * HTTP/1.1\r\n", "GET / http/1.1\r\n",
        "GET / HTTP/2.0\r\n", "GET /\u{e9} HTTP/1.1\r\n", "GET /a\u{7f} HTTP/1.1\r\n", "OPTIONS * HTTP/1.1\r\n", "GET /\r\n",
        "\r\nGET / HTTP/1.1\r\n", "GETX / HTTP/1.1\r\n", "HEAD /x?y=%zz HTTP/1.1\r\n",
    ]
    static let names = [
        "Host", "host", "HOST", "Accept", "Connection", "User-Agent", "If-None-Match", "Cookie", "X-Request-ID", "Sec-CH-DPR",
        "Content-Length", "content-length", "Transfer-Encoding", "Upgrade", "Expect", "Keep-Alive", "a", "!#$%&'*+-.^_`|~",
        "X Y", "X\"Y", "", "X\u{e9}", "X(", "Accept-Encoding", "Content-Type", "Te", "Trailer", "Proxy-Connection",
    ]
    static let separators = [":", ": ", ":\t", ":  \t ", " :", "\t:", ""]
    static let values = [
        "", "t", "localhost:8080", "image/avif,image/webp,*/*;q=0.8", "keep-alive", "close", "Keep-Alive, Upgrade", "upgrade",
        "\"abc\"", "a=1; b=2", "0", "5", "chunked", "a b", "a\tb", "a ", "a\t", " ", "\u{e9}", "a\u{7f}", "a\u{1}b", "a\rb",
        "a\nb", "100-continue", "h2c", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)",
    ]
    /// A request line, one in the subset half the time.
    static let requestLine = Gen<String>.frequency(
        (weight: 1, gen: Gen.element(of: requestLines).map { $0! }),
        (weight: 1, gen: Gen.element(of: requestLines.filter { $0.hasPrefix("GET /") || $0.hasPrefix("HEAD /") }).map { $0! }))
    static let lineEnds = ["\r\n", "\r\n", "\r\n", "\n", "\r", "\r\n ", "\r\n\t"]
    static let ends = ["\r\n", "\r\n", "\r\n", "\n", "", "\r", "\r\nX"]

    /// A header line from any pieces, or (nine times in ten, so that whole heads in the subset are common) from those
    /// the subset takes.
    static let headers = Gen<String>.frequency(
        (weight: 1, gen: zip(Gen.element(of: names), Gen.element(of: separators), Gen.element(of: values), Gen.element(of: lineEnds))
            .map { name, separator, value, end in name! + separator! + value! + end! }),
        (weight: 9, gen: zip(Gen.element(of: names.filter(taken)), Gen.element(of: [":", ": ", ":\t", ":  \t "]),
                             Gen.element(of: values.filter(taken)))
            .map { name, separator, value in name! + separator! + value! + "\r\n" }))
        .array(of: 0...8)

    /// Whether a name or value is one the subset takes (in a field it allows).
    static func taken(_ piece: String) -> Bool {
        piece.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7f } && !piece.hasSuffix(" ") && !piece.contains("X ")
            && !["content-length", "transfer-encoding", "upgrade", "expect", "", "x\"y", "x("].contains(piece.lowercased())
    }

    @Test("a generated head the reader reads is read by NIO's decoder as the same request, ended at the same byte")
    func generatedHeads() async {
        let counts = Counts()
        await propertyCheck(count: 4000, input: Self.requestLine, Self.headers, Gen.element(of: Self.ends)) { line, headers, end in
            let bytes = Array((line + headers.joined() + end!).utf8)
            counts.add(Self.check(bytes))
        }
        // The generator reaches every kind of reading, each often.
        #expect(counts.heads > 400 && counts.incomplete > 100 && counts.outside > 400, "\(counts.heads) \(counts.incomplete) \(counts.outside)")
    }

    @Test("random bytes after a request line: whatever the reader reads, the decoder reads the same")
    func randomBytes() async {
        let byte = Gen.element(of: Array("\r\n\t :aA/#\u{7f}".utf8) + [0, 0x80, 0xff, 0x41, 0x61]).map { $0! }
        await propertyCheck(count: 2000, input: Gen.element(of: ["GET / HTTP/1.1\r\n", "HEAD /x HTTP/1.1\r\nHost: t\r\n"]), byte.array(of: 0...24)) { line, tail in
            Self.check(Array(line!.utf8) + tail + Array("\r\n\r\n".utf8))
        }
    }

    /// The heads real clients send for an image (their own request lines and fields, from their sources and captures:
    /// Chromium 156 and Firefox on Linux, Safari's and URLSession's, curl 7.88, wrk 4.1, python-requests, Go's
    /// net/http, AsyncHTTPClient, h2load's HTTP/1 mode, nginx as a proxy).
    static let clients = [
        "GET /api/v1/elements/26/thumbnail HTTP/1.1\r\nHost: localhost:8080\r\nConnection: keep-alive\r\nsec-ch-ua-platform: \"Linux\"\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36\r\nsec-ch-ua: \"Chromium\";v=\"156\", \"Not:A-Brand\";v=\"99\"\r\nsec-ch-ua-mobile: ?0\r\nAccept: image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8\r\nSec-Fetch-Site: same-origin\r\nSec-Fetch-Mode: no-cors\r\nSec-Fetch-Dest: image\r\nReferer: http://localhost:8080/\r\nAccept-Encoding: gzip, deflate, br, zstd\r\nAccept-Language: en-US,en;q=0.9\r\nIf-None-Match: \"5e7c-18f\"\r\n\r\n",
        "GET /periodictable/Tiles/026/s7.JPG HTTP/1.1\r\nHost: www.theodoregray.com\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\nAccept: image/avif,image/webp,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5\r\nAccept-Language: en-US,en;q=0.5\r\nAccept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\nReferer: http://localhost:8080/\r\nSec-Fetch-Dest: image\r\nSec-Fetch-Mode: no-cors\r\nSec-Fetch-Site: cross-site\r\nPriority: u=5, i\r\n\r\n",
        "GET /iron.jpg HTTP/1.1\r\nHost: images-of-elements.com\r\nAccept: image/webp,image/avif,video/*;q=0.8,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5\r\nUser-Agent: PeriodicTable/1 CFNetwork/1498.700.2 Darwin/23.6.0\r\nAccept-Language: en-GB,en;q=0.9\r\nAccept-Encoding: gzip, deflate\r\nConnection: keep-alive\r\n\r\n",
        "GET /api/v1/elements/26/thumbnail?w=64 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n",
        "GET /api/v1/elements/26/thumbnail HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n",
        "GET /unsafe/rs:fit:300:300/plain/http://example.com/a.jpg@webp HTTP/1.1\r\nHost: img.example\r\nUser-Agent: python-requests/2.31.0\r\nAccept-Encoding: gzip, deflate\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n",
        "GET /unsafe/300x200/smart/example.com/a.jpg HTTP/1.1\r\nHost: img.example\r\nUser-Agent: Go-http-client/1.1\r\nAccept-Encoding: gzip\r\n\r\n",
        "GET /api/v1/elements/26/thumbnail HTTP/1.1\r\nHost: localhost\r\nuser-agent: AsyncHTTPClient\r\nX-Request-ID: 3f2a\r\n\r\n",
        "HEAD /api/v1/elements/26/thumbnail HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: h2load nghttp2/1.52.0\r\n\r\n",
        "GET /api/v1/elements/26/thumbnail HTTP/1.1\r\nHost: tiles\r\nX-Real-IP: 10.0.0.7\r\nX-Forwarded-For: 10.0.0.7\r\nX-Forwarded-Proto: https\r\nConnection: keep-alive\r\nAccept: image/avif,image/webp,*/*\r\nCookie: a=1; b=2\r\n\r\n",
    ]

    @Test("the heads real clients send for an image are read here, as NIO's decoder reads them")
    func realClients() {
        for head in Self.clients {
            let reading = Self.check(Array(head.utf8))
            guard case .head(_, let length) = reading else {
                Issue.record("not read: \(head.debugDescription)")
                continue
            }
            #expect(length == head.utf8.count)
        }
    }

    @Test("heads outside the subset are the decoder's: bodies, other methods and versions, obs-fold, bare LF, long heads")
    func outside() {
        let heads = [
            "GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\nx", "GET / HTTP/1.0\r\n\r\n", "GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n",
            "GET / HTTP/1.1\nHost: t\n\n", "GET / HTTP/1.1\r\nHost: t\n\r\n", "GET / HTTP/1.1\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n",
            "GET http://t/ HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nA : b\r\n\r\n", "GET / HTTP/1.1\r\nA: b \r\n\r\n",
            "GET / HTTP/1.1\r\nA: \u{e9}\r\n\r\n", "GET / HTTP/1.1\r\n" + String(repeating: "A: b\r\n", count: 2000) + "\r\n",
        ]
        for head in heads {
            #expect(Self.read(Array(head.utf8)) == .outside, "\(head.prefix(60).debugDescription)")
        }
        // As many fields as the decoder refuses: the decoder's, which refuses them.
        let few = HTTP1StrictHead.Limits(maxHeaderFieldSize: 80 * 1024, maxHeaderListSize: 80 * 1024, maxHeaderFieldCount: 3)
        let three = Array("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n".utf8)
        #expect(three.withUnsafeBytes { HTTP1StrictHead.read($0, limits: few) } == .outside)
        #expect(Array(three[..<28] + [13, 10]).withUnsafeBytes { HTTP1StrictHead.read($0, limits: few) } != .outside)
    }

    /// How many generated heads were read as each kind (propertyCheck runs its body on the test's task).
    final class Counts {
        var heads = 0, incomplete = 0, outside = 0

        func add(_ reading: HTTP1StrictHead.Reading) {
            switch reading {
            case .head: heads += 1
            case .incomplete: incomplete += 1
            case .outside: outside += 1
            }
        }
    }
}

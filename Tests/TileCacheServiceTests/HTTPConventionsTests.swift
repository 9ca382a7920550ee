import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ImageCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Testing
import TestSupport
import TileCacheService

@Suite("Service: HTTP conventions (ETag, compression, CORS, write token, request IDs, TLS)", .timeLimit(.minutes(5)), .heavy)
struct HTTPConventionsTests {
    @Test("catalogue JSON and web assets: a strong ETag, no-cache, and 304 for a matching If-None-Match",
          arguments: ["/api/v1/elements", "/api/v1/elements/79", "/", "/app.js", "/app.css"])
    func conditional(path: String) async throws {
        try await withService(try await .start()) { client, _ in
            let first = try await client.execute(uri: path, method: .get)
            #expect(first.status == .ok)
            let etag = try #require(first.headers[.eTag])
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && !etag.hasPrefix("W/"))
            #expect(first.headers[.cacheControl] == "no-cache")
            #expect(first.headers[values: .vary].joined(separator: ",").contains("Accept-Encoding"))
            let again = try await client.execute(uri: path, method: .get, headers: [.ifNoneMatch: etag])
            #expect(again.status == .notModified && again.body.readableBytes == 0)
            #expect(again.headers[.eTag] == etag)
            let other = try await client.execute(uri: path, method: .get, headers: [.ifNoneMatch: "\"something-else\""])
            #expect(other.status == .ok && other.body == first.body)
        }
    }

    @Test("gzip and br as the client accepts them, by q-value; the same bytes once decoded; never for images")
    func compression() async throws {
        try await withService(try await .start()) { client, _ in
            let plain = try await client.execute(uri: "/api/v1/elements", method: .get)
            #expect(plain.headers[.contentEncoding] == nil)
            let gzip = try await client.execute(uri: "/api/v1/elements", method: .get, headers: [.acceptEncoding: "gzip"])
            #expect(gzip.headers[.contentEncoding] == "gzip")
            #expect(gzip.body.readableBytes < plain.body.readableBytes / 3)
            #expect(try await Self.gunzip(gzip.body) == Array(plain.body.readableBytesView))
            // The gzip representation has its own ETag, and a 304 for either tag.
            let gzipTag = try #require(gzip.headers[.eTag])
            #expect(gzipTag != plain.headers[.eTag] && gzipTag.hasSuffix("-gzip\""))
            let revalidated = try await client.execute(uri: "/api/v1/elements", method: .get,
                                                       headers: [.acceptEncoding: "gzip", .ifNoneMatch: gzipTag])
            #expect(revalidated.status == .notModified)

            let br = try await client.execute(uri: "/app.js", method: .get, headers: [.acceptEncoding: "gzip, deflate, br"])
            #expect(br.headers[.contentEncoding] == "br")
            let preferGzip = try await client.execute(uri: "/app.js", method: .get, headers: [.acceptEncoding: "br;q=0.5, gzip"])
            #expect(preferGzip.headers[.contentEncoding] == "gzip")
            let refused = try await client.execute(uri: "/app.js", method: .get, headers: [.acceptEncoding: "gzip;q=0, br;q=0"])
            #expect(refused.headers[.contentEncoding] == nil)

            let image = try await client.execute(uri: "/api/v1/elements/1/thumbnail", method: .get, headers: [.acceptEncoding: "gzip, br"])
            #expect(image.status == .ok && image.headers[.contentEncoding] == nil)
            #expect(Array(image.body.readableBytesView.prefix(2)) == [0xFF, 0xD8])
            #expect(image.headers[.vary] == nil && image.headers[.eTag]?.hasSuffix("-gzip\"") == false)
            // Every kind of text the service sends is compressed: HTML, CSS, YAML, Prometheus' text, JSON.
            for uri in ["/", "/app.css", "/openapi.yaml", "/metrics", "/api/v1/elements/1"] {
                let text = try await client.execute(uri: uri, method: .get, headers: [.acceptEncoding: "gzip"])
                #expect(text.headers[.contentEncoding] == "gzip" && text.headers[.vary] == "Accept-Encoding", "\(uri)")
            }
        }
    }

    /// `gzip -dc` of `body`: the system's gzip, not ours, judges the stream. (Through the suite's spawn helper:
    /// Foundation's `Process` reaps children it did not start, which breaks the suite's own child-process tests.)
    static func gunzip(_ body: ByteBuffer) async throws -> [UInt8] {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(body.readableBytesView).write(to: URL(fileURLWithPath: directory + "/body.gz"))
        try await runProcess(["/bin/sh", "-c", "gzip -dc '\(directory)/body.gz' > '\(directory)/body'"], description: "gzip -dc")
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/body")))
    }

    @Test("--write-token: writes need the bearer token (401 and WWW-Authenticate otherwise); reads stay open")
    func writeToken() async throws {
        try await withService(try await .start { $0.writeToken = "s3cret-token" }) { client, _ in
            let json: HTTPFields = [.contentType: "application/json"]
            let body = ByteBuffer(string: #"{"favoritedBy":"Ada","elementName":"Gold","elementSymbol":"Au"}"#)
            let none = try await client.execute(uri: "/api/v1/favorites", method: .post, headers: json, body: body)
            #expect(none.status == .unauthorized)
            #expect(none.headers[.wwwAuthenticate] == "Bearer realm=\"tilecache\"")
            #expect(String(buffer: none.body).contains("missing-token"))
            var wrong = json
            wrong[.authorization] = "Bearer s3cret-tokem"
            let bad = try await client.execute(uri: "/api/v1/favorites", method: .post, headers: wrong, body: body)
            #expect(bad.status == .unauthorized && String(buffer: bad.body).contains("bad-token"))
            var basic = json
            basic[.authorization] = "Basic czNjcmV0LXRva2Vu"
            #expect(try await client.execute(uri: "/api/v1/favorites", method: .post, headers: basic, body: body).status == .unauthorized)
            var right = json
            right[.authorization] = "Bearer s3cret-token"
            #expect(try await client.execute(uri: "/api/v1/favorites", method: .post, headers: right, body: body).status == .created)
            #expect(try await client.execute(uri: "/api/v1/favorites", method: .get).status == .ok)
            #expect(try await client.execute(uri: "/api/v1/favorites/1", method: .delete).status == .unauthorized)
        }
    }

    @Test("CORS: by default any page may read (preflights for writes get no allowance); listed origins may also write")
    func cors() async throws {
        try await withService(try await .start()) { client, _ in
            let read = try await client.execute(uri: "/api/v1/elements/1", method: .get, headers: [.origin: "http://localhost:5173"])
            #expect(read.headers[.accessControlAllowOrigin] == "*")
            #expect(read.headers[.accessControlExposeHeaders]?.contains("ETag") == true)
            let missing = try await client.execute(uri: "/api/v1/elements/999", method: .get, headers: [.origin: "http://localhost:5173"])
            #expect(missing.status == .notFound && missing.headers[.accessControlAllowOrigin] == "*")  // errors readable too
            let preflightGet = try await client.execute(uri: "/api/v1/elements", method: .options,
                                                        headers: [.origin: "http://localhost:5173", .accessControlRequestMethod: "GET"])
            #expect(preflightGet.status == .noContent && preflightGet.headers[.accessControlAllowMethods] == "GET, HEAD")
            let preflightPost = try await client.execute(uri: "/api/v1/favorites", method: .options,
                                                         headers: [.origin: "http://localhost:5173", .accessControlRequestMethod: "POST"])
            #expect(preflightPost.headers[.accessControlAllowOrigin] == nil)
            // An answer to a request without Origin may be cached and given to a page: it carries the header too.
            let sameOrigin = try await client.execute(uri: "/api/v1/elements/1", method: .get)
            #expect(sameOrigin.headers[.accessControlAllowOrigin] == "*")
        }
        let listed = try CORSPolicy(parsing: "http://localhost:5173, https://app.example.com")
        try await withService(try await .start { $0.cors = listed }) { client, _ in
            let preflight = try await client.execute(uri: "/api/v1/favorites", method: .options, headers: [
                .origin: "https://app.example.com", .accessControlRequestMethod: "POST", .accessControlRequestHeaders: "authorization, content-type"])
            #expect(preflight.headers[.accessControlAllowOrigin] == "https://app.example.com")
            #expect(preflight.headers[.accessControlAllowMethods] == "GET, HEAD, POST, PUT, DELETE")
            #expect(preflight.headers[.accessControlAllowHeaders]?.contains("Authorization") == true)
            let post = try await client.execute(uri: "/api/v1/favorites", method: .post,
                                                headers: [.origin: "https://app.example.com", .contentType: "application/json"],
                                                body: ByteBuffer(string: #"{"favoritedBy":"Ada","elementName":"Iron","elementSymbol":"Fe"}"#))
            #expect(post.status == .created && post.headers[.accessControlAllowOrigin] == "https://app.example.com")
            #expect(post.headers[values: .vary].joined(separator: ",").contains("Origin"))
            let stranger = try await client.execute(uri: "/api/v1/elements/1", method: .get, headers: [.origin: "https://evil.example"])
            #expect(stranger.headers[.accessControlAllowOrigin] == nil)
            // Answers differ by Origin, so every answer says so, including those to requests without one: a shared
            // cache must not give the copy made for curl (no Access-Control-Allow-Origin) to the allowed app.
            for path in ["/api/v1/elements/1", "/iron.jpg", "/api/v1/elements/999"] {
                let plain = try await client.execute(uri: path, method: .get)
                #expect(plain.headers[values: .vary].joined(separator: ",").contains("Origin"), "\(path)")
                #expect(plain.headers[.accessControlAllowOrigin] == nil, "\(path)")
            }
        }
        #expect(throws: ServiceConfigurationError.self) { try CORSPolicy(parsing: "localhost:5173") }
        #expect(throws: ServiceConfigurationError.self) { try CORSPolicy(parsing: "https://app.example.com/path") }
    }

    @Test("cross-site writes: a body that is not JSON is 415, and a write from a page on an origin --cors-origin does not list is 403; nothing is stored",
          arguments: ["*", "none", "https://app.example.com"])
    func crossSiteWrites(cors: String) async throws {
        try await withService(try await .start { $0.cors = try! CORSPolicy(parsing: cors) }) { client, _ in
            let body = ByteBuffer(string: #"{"favoritedBy":"Mallory","elementName":"Iron","elementSymbol":"Fe"}"#)
            // What a page can send without a preflight: text/plain, a form, multipart, or no type. Refused even from
            // a client that sends no Origin (a browser always does; a page on another origin is refused below).
            for type in ["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                         "multipart/form-data; boundary=x", nil] {
                var headers: HTTPFields = [:]
                if let type { headers[.contentType] = type }
                let post = try await client.execute(uri: "/api/v1/favorites", method: .post, headers: headers, body: body)
                #expect(post.status == .unsupportedMediaType && post.errorReason == "bad-content-type", "\(type ?? "none")")
                #expect(String(buffer: post.body).contains(type.map { "'\($0)'" } ?? "none"))
            }
            // JSON from a page on another origin: only a listed origin may write.
            for origin in ["https://evil.example", "null", "https://app.example.com.evil.example"] {
                let post = try await client.execute(uri: "/api/v1/favorites", method: .post,
                                                    headers: [.origin: origin, .contentType: "application/json"], body: body)
                #expect(post.status == .forbidden && post.errorReason == "cross-origin-write", "\(origin)")
                let delete = try await client.execute(uri: "/api/v1/favorites/1", method: .delete, headers: [.origin: origin])
                #expect(delete.status == .forbidden, "\(origin)")
            }
            let listed = try await client.execute(uri: "/api/v1/favorites", method: .post,
                                                  headers: [.origin: "https://APP.example.com", .contentType: "application/json; charset=utf-8"], body: body)
            #expect(listed.status == (cors == "https://app.example.com" ? .created : .forbidden))
            // The service's own page (Origin names the address the request went to), and clients that send no Origin.
            for host in ["127.0.0.1:8080", "localhost:8080", "[::1]:8080"] {
                let ownPage = try await client.execute(uri: "/api/v1/favorites", method: .post,
                                                       headers: [HTTPField.Name("Host")!: host, .origin: "http://\(host)", .contentType: "application/json"], body: body)
                #expect(ownPage.status == .created, "\(host)")
            }
            // A page under a name that resolves here only for the attack (DNS rebinding) is same-origin by Host alone:
            // refused (it was 201).
            let rebound = try await client.execute(uri: "/api/v1/favorites", method: .post,
                                                   headers: [HTTPField.Name("Host")!: "rebind.attacker.example:8080", .origin: "http://rebind.attacker.example:8080",
                                                             .contentType: "application/json"], body: body)
            #expect(rebound.status == .forbidden && rebound.errorReason == "cross-origin-write")
            let curl = try await client.execute(uri: "/api/v1/favorites", method: .post, headers: [.contentType: "application/vnd.api+json"], body: body)
            #expect(curl.status == .created)
            let stored = try await client.execute(uri: "/api/v1/favorites", method: .get).decoded(as: [ServiceJSON.Favorite].self)
            #expect(stored.count == (cors == "https://app.example.com" ? 5 : 4))
        }
    }

    @Test("the pages under --public-url write whatever their Host; other names need --cors-origin")
    func publicURLWrites() async throws {
        try await withService(try await .start { $0.publicURL = "https://Tiles.example.com:8443/images" }) { client, _ in
            let body = ByteBuffer(string: #"{"favoritedBy":"Ada","elementName":"Iron","elementSymbol":"Fe"}"#)
            for (origin, status) in [("https://tiles.example.com:8443", HTTPResponse.Status.created), ("https://tiles.example.com", .forbidden),
                                     ("http://tiles.example.com:8443", .forbidden)] {
                let post = try await client.execute(uri: "/api/v1/favorites", method: .post,
                                                    headers: [HTTPField.Name("Host")!: "backend:8080", .origin: origin, .contentType: "application/json"], body: body)
                #expect(post.status == status, "\(origin)")
            }
        }
    }

    @Test("HTTP/1.0: the connection closes after the answer (it was held for the 30 s idle timeout); with keep-alive it stays. Connection: close in any case, alone or among other options, closes it too (`Close` was held)",
          arguments: [true, false])
    func http10(fastPath: Bool) async throws {
        try await withService(try await .start { $0.fastPath = fastPath }, mode: .live) { client, _ in
            let port = try #require(client.port)
            #expect(try await client.execute(uri: "/iron.jpg", method: .get).status == .ok)  // in memory: the fast path's
            for path in ["/iron.jpg", "/api/v1/elements/1"] {
                let answer = try await Self.raw("GET \(path) HTTP/1.0\r\n\r\n", port: port)
                #expect(answer.hasPrefix("HTTP/1.1 200 OK") && answer.contains("\r\n\r\n"), "\(path): \(answer.prefix(80))")
            }
            // Keep-alive asked for: two answers on one connection (the server keeps it; the test closes it).
            let both = try await Self.raw("GET /api/v1/elements/1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"
                                          + "GET /api/v1/elements/2 HTTP/1.0\r\nConnection: close\r\n\r\n", port: port)
            #expect(both.components(separatedBy: "HTTP/1.1 200 OK").count == 3, "\(both.prefix(200))")
            // The close option, in HTTP/1.1 and beside keep-alive in HTTP/1.0 (which llhttp does not look for there): nothing
            // after the answer is answered.
            let closing = [("1.1", "Connection: close"), ("1.1", "Connection: Close"), ("1.1", "Connection: CLOSE"),
                           ("1.1", "Connection: keep-alive, Close"), ("1.1", "Connection: Close, TE"),
                           ("1.0", "Connection: keep-alive, close"), ("1.0", "Connection: keep-alive\r\nConnection: Close")]
            for (version, fields) in closing {
                for path in ["/iron.jpg", "/api/v1/elements/1"] {
                    let answer = try await Self.raw("GET \(path) HTTP/\(version)\r\nHost: t\r\nTE: trailers\r\n\(fields)\r\n\r\n"
                                                    + "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n", port: port)
                    #expect(answer.hasPrefix("HTTP/1.1 200 OK"), "\(version), \(fields), \(path): \(answer.prefix(80))")
                    #expect(answer.components(separatedBy: "HTTP/1.1 ").count == 2, "\(version), \(fields), \(path): nothing after the answer")
                }
            }
        }
    }

    @Test("CONNECT is 405 and the connection closes (it was a 404 without Content-Length, then a stalled connection); a malformed chunk size is 400, not 413; an announced body over 64 KiB is 413 at once; a transfer coding other than chunked is 501",
          arguments: [true, false])
    func connectAndChunks(fastPath: Bool) async throws {
        try await withService(try await .start { $0.fastPath = fastPath }, mode: .live) { client, _ in
            let port = try #require(client.port)
            let connect = try await Self.raw("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\nGET /healthz HTTP/1.1\r\nHost: t\r\n\r\n", port: port)
            #expect(connect.hasPrefix("HTTP/1.1 405 Method Not Allowed\r\n") && connect.contains("Allow: GET, HEAD, POST, PUT, DELETE, OPTIONS"), "\(connect)")
            #expect(connect.components(separatedBy: "HTTP/1.1 ").count == 2, "nothing after a CONNECT is answered: \(connect)")
            for size in ["zz", "-1", "ffffffffffffffffffff"] {
                let chunked = try await Self.raw("POST /api/v1/favorites HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nConnection: close\r\n"
                                                 + "Transfer-Encoding: chunked\r\n\r\n\(size)\r\n{}\r\n0\r\n\r\n", port: port)
                #expect(chunked.hasPrefix("HTTP/1.1 400 Bad Request\r\n") && chunked.contains(#""reason":"bad-body""#), "chunk size \(size): \(chunked.prefix(300))")
            }
            let tooLarge = try await Self.raw("POST /api/v1/favorites HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nConnection: close\r\n"
                                              + "Content-Length: 70000\r\n\r\n" + String(repeating: " ", count: 70000), port: port)
            #expect(tooLarge.hasPrefix("HTTP/1.1 413 "), "a body over 64 KiB is still 413: \(tooLarge.prefix(100))")
            // A length over the limit is refused from the head, and the connection closes: it was held (and the body
            // read) until the body timeout.
            let started = ContinuousClock.now
            let announced = try await Self.raw("POST /api/v1/favorites HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                                               + "Content-Length: 999999999999\r\n\r\n{", port: port)
            #expect(announced.hasPrefix("HTTP/1.1 413 ") && announced.contains(#""reason":"body-too-large""#), "\(announced.prefix(300))")
            #expect(ContinuousClock.now - started < TestTime.scaled(.seconds(8)), "closed within the linger time, not at the body timeout")
            // After a request still being answered, in order.
            let pipelined = try await Self.raw("GET /api/v1/elements/1 HTTP/1.1\r\nHost: t\r\n\r\n"
                                               + "PUT /api/v1/favorites/1 HTTP/1.1\r\nHost: t\r\nContent-Length: 70000\r\n\r\n", port: port)
            let statuses = pipelined.components(separatedBy: "HTTP/1.1 ").dropFirst().map { $0.prefix(3) }
            #expect(statuses == ["200", "413"], "\(statuses)")
            // A transfer coding other than chunked is 501 (gzip was accepted and ignored).
            let gzip = try await Self.raw("POST /api/v1/favorites HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                                          + "Transfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", port: port)
            #expect(gzip.hasPrefix("HTTP/1.1 501 ") && gzip.contains(#""reason":"unsupported-transfer-coding""#), "\(gzip.prefix(300))")
        }
    }

    /// Sends `request` on a new connection and returns all it receives until the server closes the connection; throws
    /// when it is still open after 10 s (scaled).
    private static func raw(_ request: String, port: Int) async throws -> String {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
            }
        let exchange: @Sendable () async throws -> String = {
            try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(ByteBuffer(string: request))
                var received = ByteBuffer()
                for try await chunk in inbound { received.writeImmutableBuffer(chunk) }
                return String(buffer: received)
            }
        }
        return try await Deadline.first(of: exchange, orThrow: { TestFailure("the server kept the connection open 10 s after \(request.prefix(40))") },
                                        at: .now + TestTime.scaled(.seconds(10)), onExpiry: { channel.channel.close(promise: nil) })
    }

    @Test("X-Request-ID: a client's sensible ID (letters, digits and -_.:/+=, at most 128) is echoed; a missing or unsafe one is replaced by a new one")
    func requestID() async throws {
        try await withService(try await .start()) { client, _ in
            let id = HTTPField.Name("X-Request-ID")!
            let echoed = try await client.execute(uri: "/healthz", method: .get, headers: [id: "abc-123"])
            #expect(echoed.headers[id] == "abc-123")
            let first = try #require(try await client.execute(uri: "/healthz", method: .get).headers[id])
            let second = try #require(try await client.execute(uri: "/api/v1/elements/1", method: .get).headers[id])
            #expect(first.count == 32 && second.count == 32 && first != second)
            // 32 hex digits: the process's prefix, then its scrambled counter.
            #expect((first + second).allSatisfy(\.isHexDigit) && first.prefix(16) == second.prefix(16) && first.suffix(16) != second.suffix(16))
            for unsafe in ["a b\u{7F}", "<script>alert(1)</script>", "id\"quoted\"", "a;b"] {
                let answer = try await client.execute(uri: "/healthz", method: .get, headers: [id: unsafe])
                #expect(answer.headers[id] != unsafe && answer.headers[id]?.count == 32, "\(unsafe)")
            }
            #expect(try await client.execute(uri: "/healthz", method: .get, headers: [id: "req_1.a:B-2/x+y="]).headers[id] == "req_1.a:B-2/x+y=")
            let error = try await client.execute(uri: "/nowhere", method: .get, headers: [id: "err-1"])
            #expect(error.status == .notFound && error.headers[id] == "err-1")
        }
    }

    @Test("/metrics: every metric has a # HELP line before its # TYPE line")
    func metricsHelp() async throws {
        try await withService(try await .start()) { client, _ in
            _ = try await client.execute(uri: "/api/v1/elements/1/thumbnail", method: .get)
            let text = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            let lines = text.split(separator: "\n")
            let types = lines.indices.filter { lines[$0].hasPrefix("# TYPE ") }
            #expect(types.count >= 8)
            for index in types {
                let name = lines[index].split(separator: " ")[2]
                #expect(index > 0 && lines[index - 1].hasPrefix("# HELP \(name) "), "no HELP for \(name)")
            }
        }
    }

    @Test("--tls-cert/--tls-key: HTTPS, HTTP/2 by ALPN for curl, HTTP/1.1 for a client that asks for it; images in memory answered by the fast path over both, the same bytes and headers as the router's")
    func tls() async throws {
        let service = try await TLSService.start()
        defer { service.running.cancel() }
        let (directory, bound, log, harness) = (service.directory, service.port, service.log, service.harness)
        for (flag, version) in [("--http2", "2"), ("--http1.1", "1.1")] {
            try await runProcess(["/bin/sh", "-c", """
                v=$(curl -sS --cacert \(directory)/cert.pem \(flag) -o \(directory)/body -w '%{http_version} %{http_code}' \
                  https://127.0.0.1:\(bound)/api/v1/elements/79) && test "$v" = "\(version) 200" \
                  && grep -q '"name" *: *"Gold"' \(directory)/body || { echo "curl \(flag): $v" >&2; exit 1; }
                """], description: "curl \(flag) over TLS")
        }
        // A thumbnail, fetched once to fill the memory tier, then by each protocol: the fast path answers over HTTP/2 and
        // HTTP/1.1 alike; with `Connection: close` the router answers. The answers are the same but for Date and the
        // request ID (and the router's `Connection: close`).
        let fastPathAnswers = service.fastPathAnswers
        let thumbnail = "https://127.0.0.1:\(bound)/api/v1/elements/26/thumbnail?w=64"
        func fetch(_ flags: [String], _ name: String) async throws -> (headers: [String], body: Data) {
            try await runProcess(["/usr/bin/curl", "-sSf", "--cacert", directory + "/cert.pem"] + flags + ["-D", "\(directory)/\(name).head",
                                  "-o", "\(directory)/\(name).body", thumbnail], description: "curl \(flags) \(name)")
            let head = try String(contentsOfFile: "\(directory)/\(name).head", encoding: .utf8)
            let headers = head.split(separator: "\r\n").dropFirst().map { $0.lowercased() }
                .filter { !$0.hasPrefix("date:") && !$0.hasPrefix("x-request-id:") && $0 != "connection: close" && !$0.isEmpty }.sorted()
            return (headers, try Data(contentsOf: URL(fileURLWithPath: "\(directory)/\(name).body")))
        }
        _ = try await fetch(["--http2"], "warm")
        let before = fastPathAnswers()
        let h2 = try await fetch(["--http2"], "h2")
        #expect(fastPathAnswers() == before + 1, "HTTP/2: the fast path answers")
        let h1 = try await fetch(["--http1.1"], "h1")
        #expect(fastPathAnswers() == before + 2, "HTTP/1.1 over TLS: the fast path answers")
        let router = try await fetch(["--http1.1", "-H", "Connection: close"], "router")
        #expect(fastPathAnswers() == before + 2, "HTTP/1.1 with Connection: close: the router answers")
        #expect(h2.headers == router.headers && h1.headers == router.headers && h2.body == router.body && h1.body == router.body
                && h2.headers.contains("x-tilecache-source: memory"), "\(h2.headers) \(h1.headers) \(router.headers)")
        // Nothing to warn about in any of it.
        #expect(log.warnings.isEmpty, "\(log.warnings.map { "\($0.level) \($0.text)" })")
        #expect(throws: ServiceConfigurationError.self) {
            var broken = harness
            broken.configuration.tls = TLSFiles(certificateChain: directory + "/key.pem", privateKey: directory + "/key.pem")
            _ = try buildApplication(try broken.dependencies(), logger: Logger(label: "test"))
        }
        await service.stop()
    }

    @Test("HTTP/2 (hyper-h2): every request at once on one connection, each on its stream: the fast path's answers and the router's (misses, JSON, a 404) whole, X-Request-ID kept out of HPACK's table; then the idle connection closed by GOAWAY, a client's that never acknowledges it too")
    func http2Streams() async throws {
        try await runProcess([ScriptServer.packageRoot + "/scripts/check-envs.sh", "h2"], description: "scripts/check-envs.sh h2")
        let service = try await TLSService.start { $0.idleTimeout = .seconds(2) }
        defer { service.running.cancel() }
        let (directory, bound, log, fastPathAnswers) = (service.directory, service.port, service.log, service.fastPathAnswers)
        for image in ["thumbnail", "image"] {
            try await runProcess(["/usr/bin/curl", "-sSf", "--cacert", directory + "/cert.pem", "--http2", "-o", "/dev/null",
                                  "https://127.0.0.1:\(bound)/api/v1/elements/26/\(image)"], description: "curl (warm)")
        }
        let before = fastPathAnswers()
        // 10 GETs and a HEAD of the thumbnail in memory and 2 GETs of the photo in memory (the fast path, on the
        // connection: no stream channel); 20 thumbnails and a variant not yet loaded, an element's JSON and a 404 (the
        // router), interleaved. The photo is larger than the client's 64 KiB window: the rest of it waits in the HTTP/2
        // handler for the client's WINDOW_UPDATE frames on a stream no stream channel has.
        var requests = [String]()
        for number in 1...20 {
            requests.append("GET /api/v1/elements/\(number + 30)/thumbnail")
            if number.isMultiple(of: 2) { requests.append("GET /api/v1/elements/26/thumbnail") }
            if number.isMultiple(of: 10) { requests.append("GET /api/v1/elements/26/image") }
        }
        requests += ["HEAD /api/v1/elements/26/thumbnail", "GET /api/v1/elements/79", "GET /nope", "GET /api/v1/elements/27/thumbnail?w=40"]
        let run = try await service.h2Client("out", requests)
        #expect(run.answers.map(\.request) == requests)
        for answer in run.answers {
            let head = answer.request.hasPrefix("HEAD ")
            #expect(answer.ended && answer.status == (answer.request.hasSuffix("/nope") ? 404 : 200)
                    && answer.contentLength != nil && answer.length == (head ? 0 : answer.contentLength), "\(answer)")
            if answer.request.hasSuffix("/26/thumbnail") || answer.request.hasSuffix("/26/image") {
                #expect(answer.source == "memory", "\(answer)")
            }
            if answer.request.hasSuffix("/26/image") { #expect((answer.contentLength ?? 0) > 65_535, "\(answer)") }
        }
        #expect(fastPathAnswers() == before + 13, "the 13 requests for the thumbnail and the photo in memory, by the fast path")
        // HPACK: the fields answers repeat are indexed; X-Request-ID, new in every answer, is not (it evicted them).
        #expect(run.indexed.contains("cache-control") && run.indexed.contains("access-control-expose-headers")
                && !run.indexed.contains("x-request-id"), "\(run.indexed)")
        // The connection, idle after its last answer, is closed by the idle timeout (2 s), gracefully: GOAWAY first.
        #expect(run.goaway != nil && run.closed && run.silence >= 1 && run.silence < 10, "goaway \(String(describing: run.goaway)), closed \(run.closed) after \(run.silence) s")
        // A client that never acknowledges the PING after the GOAWAY: closed anyway, the idle timeout after the GOAWAY.
        let mute = try await service.h2Client("mute", options: ["--mute"], ["GET /api/v1/elements/26/thumbnail"])
        #expect(mute.answers.first?.status == 200 && mute.goaway != nil && mute.closed && mute.silence >= 3 && mute.silence < 12,
                "goaway \(String(describing: mute.goaway)), closed \(mute.closed) after \(mute.silence) s")
        // A connection that never opens a stream is idle from its start (the manager's idle timer, started on
        // channelActive, which an ALPN-negotiated connection had before the manager was added, never started).
        let none = try await service.h2Client("none", [])
        #expect(none.goaway != nil && none.closed && none.silence >= 1 && none.silence < 10,
                "goaway \(String(describing: none.goaway)), closed \(none.closed) after \(none.silence) s")
        #expect(log.warnings.isEmpty, "\(log.warnings.map { "\($0.level) \($0.text)" })")
        await service.stop()
    }

    @Test("HTTP/2 (hyper-h2): a request for an image in memory whose stream is left open (HEADERS without END_STREAM) is reset at the idle timeout, then the idle connection closed")
    func http2StreamLeftOpen() async throws {
        try await runProcess([ScriptServer.packageRoot + "/scripts/check-envs.sh", "h2"], description: "scripts/check-envs.sh h2")
        let service = try await TLSService.start { $0.idleTimeout = .seconds(2) }
        defer { service.running.cancel() }
        let (directory, bound) = (service.directory, service.port)
        try await runProcess(["/usr/bin/curl", "-sSf", "--cacert", directory + "/cert.pem", "--http2", "-o", "/dev/null",
                              "https://127.0.0.1:\(bound)/api/v1/elements/26/thumbnail"], description: "curl (warm)")
        // The fast path has the answer, and waits for the request's end; a stream answered there has no connection state
        // handler, so its own timeout must end it, or the open stream would keep the connection from ever being idle.
        let run = try await service.h2Client("open", ["OPEN GET /api/v1/elements/26/thumbnail", "GET /api/v1/elements/26/thumbnail"])
        #expect(run.answers.count == 2 && run.answers[0].reset && run.answers[0].status == nil, "\(run.answers)")
        #expect(run.answers.count == 2 && run.answers[1].ended && run.answers[1].status == 200, "\(run.answers)")
        #expect(run.closed)
        await service.stop()
    }

    @Test("HTTP/2 (hyper-h2): a client that grants its streams no flow-control window gets the head of a photo in memory the fast path answers on the connection, and the connection is reset at the send timeout, as a stream's connection guard would end it")
    func http2StalledClient() async throws {
        try await runProcess([ScriptServer.packageRoot + "/scripts/check-envs.sh", "h2"], description: "scripts/check-envs.sh h2")
        let sendTimeout = TestTime.scaled(.seconds(1))
        let service = try await TLSService.start { $0.connectionLimits.sendTimeout = sendTimeout }
        defer { service.running.cancel() }
        let (directory, bound) = (service.directory, service.port)
        try await runProcess(["/usr/bin/curl", "-sSf", "--cacert", directory + "/cert.pem", "--http2", "-o", "/dev/null",
                              "https://127.0.0.1:\(bound)/api/v1/elements/26/image"], description: "curl (warm)")
        let before = service.fastPathAnswers()
        // Without the timeout the stream stays open for good (its DATA waits for a window), and with it the connection:
        // the connection manager's idle timer waits for open streams (the idle timeout here is the default 60 s).
        let run = try await service.h2Client("stalled", options: ["--window=0"], ["GET /api/v1/elements/26/image"])
        let seconds = Double(sendTimeout.components.seconds) + Double(sendTimeout.components.attoseconds) / 1e18
        #expect(run.answers.count == 1 && run.answers[0].status == 200 && run.answers[0].length == 0 && !run.answers[0].ended, "\(run.answers)")
        #expect(run.closed && run.goaway == nil && run.silence >= seconds * 0.9 && run.silence < seconds * 3 + 5,
                "closed \(run.closed), goaway \(String(describing: run.goaway)), after \(run.silence) s (send timeout \(seconds) s)")
        #expect(service.fastPathAnswers() == before + 1, "answered on the connection, by the fast path")
        #expect(service.connectionsClosed("send-timeout") == 1)
        #expect(service.log.messages.contains { $0.text.contains("took none of its answer") }, "\(service.log.messages.map(\.text))")
        await service.stop()
    }

    @Test("HTTP/1.1 over TLS: a client that pipelines 600 requests for a photo in memory and does not read gets every answer once it reads, but the fast path stops at what the connection holds: the rest wait for the router's backpressure")
    func pipelinedOverTLS() async throws {
        let service = try await TLSService.start()
        defer { service.running.cancel() }
        let (directory, bound) = (service.directory, service.port)
        let photo = "/api/v1/elements/26/image"
        try await runProcess(["/usr/bin/curl", "-sSf", "--cacert", directory + "/cert.pem", "-o", directory + "/photo",
                              "https://127.0.0.1:\(bound)\(photo)"], description: "curl (warm)")
        let photoBytes = try #require(FileManager.default.attributesOfItem(atPath: directory + "/photo")[.size] as? Int)
        let (fastBefore, photosBefore) = (service.fastPathAnswers(), service.photoAnswers())
        // The client reads nothing until told: what the fast path answers does not depend on how fast either side runs
        // (a client that kept up would rightly be answered by the fast path throughout; one run under load did).
        let go = directory + "/go"
        guard mkfifo(go, 0o600) == 0 else { throw TestFailure("mkfifo \(go): \(String(cString: strerror(errno)))") }
        // Tells the client to read: a byte into its pipe (which it holds open from its start; before that, or after its
        // end, there is no reader and nothing to tell).
        let tellClientToRead: @Sendable () -> Void = {
            let pipe = open(go, O_WRONLY | O_NONBLOCK)
            guard pipe >= 0 else { return }
            _ = write(pipe, "g", 1)
            close(pipe)
        }
        let client = Task {
            try await runPythonClient("pipelining_client.py", ["--tls", directory + "/cert.pem", "--read-after", go, "\(bound)",
                                                               directory + "/out"] + Array(repeating: photo, count: 600))
        }
        // NIOSSL keeps what is written until a flush: the fast path once answered all 600 in one read (43 MB held for a
        // client that reads none of it), and the router none. It now flushes every 64 KiB, and the channel stops taking
        // answers once the socket holds what the client has not read: the next request goes to the router, whose answer
        // waits. So the fast path answers at most what the socket's send buffer (at most tcp_wmem's largest), the client's
        // 4 KiB receive buffer, NIO's high watermark and the answer that crossed it hold; without the flush bound, a read
        // of requests was answered whole (all 600, or about 280 when TLS's 16 KiB records came in separate reads).
        let sendBuffer = try #require(String(contentsOfFile: "/proc/sys/net/ipv4/tcp_wmem", encoding: .utf8)
            .split(whereSeparator: \.isWhitespace).last.flatMap { Int($0) })
        let most = (sendBuffer + 256 * 1024) / photoBytes + 2
        do {
            // (The route's count is read first: the fast path counts an answer as its own before it counts it by route.)
            try await waitUntil("a photo request answered by the router", within: .seconds(30)) {
                service.photoAnswers() - photosBefore > service.fastPathAnswers() - fastBefore
            }
        } catch {
            tellClientToRead()
            _ = await client.result
            await service.stop()
            throw error
        }
        let fast = service.fastPathAnswers() - fastBefore
        #expect(fast > 0 && fast <= most, "\(fast) of 600 answered by the fast path before the client read (at most \(most))")
        tellClientToRead()
        try await client.value
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/out"))
        let answers = data.split(separator: Data("HTTP/1.1 200 OK\r\n".utf8), omittingEmptySubsequences: true).count
        #expect(answers == 601, "every answer, and /healthz's")
        await service.stop()
    }

    @Test("--tls-cert with --no-fast-path: Hummingbird's own HTTPS server answers over HTTP/2 and HTTP/1.1, and logs no warning")
    func tlsWithoutFastPath() async throws {
        let service = try await TLSService.start { $0.fastPath = false }
        defer { service.running.cancel() }
        for flag in ["--http2", "--http1.1", "--http2"] {
            try await runProcess(["/usr/bin/curl", "-sSf", "--max-time", "30", "--cacert", service.directory + "/cert.pem", flag, "-o", "/dev/null",
                                  "https://127.0.0.1:\(service.port)/api/v1/elements/26/thumbnail"], description: "curl \(flag)")
        }
        #expect(service.fastPathAnswers() == 0)
        // Each HTTP/2 stream logged an error until issue 35 (the HTTP/1.0 handler's installer looked for an HTTP/1 decoder).
        #expect(service.log.warnings.isEmpty, "\(service.log.warnings.map { "\($0.level) \($0.text)" })")
        await service.stop()
    }

    /// The service on HTTPS (a self-signed certificate for 127.0.0.1 in `directory`), logging into `log`.
    struct TLSService {
        let directory: String
        let harness: ServiceHarness
        let dependencies: ServiceDependencies
        let log: CapturedLog
        let running: Task<Void, any Error>
        let port: Int

        static func start(_ configure: (inout ServiceConfiguration) -> Void = { _ in }) async throws -> TLSService {
            let directory = try makeTemporaryDirectory()
            let pem = try await makeSelfSignedCertificate(in: directory)
            let harness = try await ServiceHarness.start {
                $0.tls = TLSFiles(certificateChain: pem.certificate, privateKey: pem.key)
                configure(&$0)
            }
            let port = AsyncStream.makeStream(of: Int.self)
            let dependencies = try harness.dependencies()
            let log = CapturedLog()
            let app = try buildApplication(dependencies, logger: log.logger) { port.continuation.yield($0) }
            let running = Task { try await app.runService(gracefulShutdownSignals: []) }
            var ports = port.stream.makeAsyncIterator()
            guard let bound = await ports.next() else { throw TestFailure("the HTTPS service never said its port") }
            return TLSService(directory: directory, harness: harness, dependencies: dependencies, log: log, running: running, port: bound)
        }

        /// `tilecache_http_fast_path_answers_total`.
        func fastPathAnswers() -> Int { metric("tilecache_http_fast_path_answers_total") }

        /// What Tests/Clients/h2_client.py writes (every field it writes; see its docstring).
        struct H2ClientRun: Decodable {
            struct Answer: Decodable {
                let request: String
                let status: Int?
                let source: String?
                let length: Int
                let contentLength: Int?
                let ended: Bool
                let reset: Bool
            }
            let answers: [Answer]
            let goaway: Int?
            let closed: Bool
            let silence: Double
            let indexed: [String]
        }

        /// Runs Tests/Clients/h2_client.py (hyper-h2) with `options` and `requests` against the service, and reads what
        /// it wrote to `name`.json in the service's directory.
        func h2Client(_ name: String, options: [String] = [], _ requests: [String]) async throws -> H2ClientRun {
            let out = directory + "/\(name).json"
            try await runProcess([ScriptServer.packageRoot + "/.build/h2-venv/bin/python", ScriptServer.packageRoot + "/Tests/Clients/h2_client.py"]
                                 + options + ["\(port)", directory + "/cert.pem", out] + requests,
                                 description: "Tests/Clients/h2_client.py \((options + [name]).joined(separator: " "))")
            return try JSONDecoder().decode(H2ClientRun.self, from: Data(contentsOf: URL(fileURLWithPath: out)))
        }

        /// `tilecache_http_connections_closed_total` for `reason`.
        func connectionsClosed(_ reason: String) -> Int { metric("tilecache_http_connections_closed_total{reason=\"\(reason)\"}") }

        /// The photos' 200 answers, by the fast path or the router (`tilecache_http_requests_total` of GET
        /// `/api/v1/elements/{id}/image`).
        func photoAnswers() -> Int {
            metric(#"tilecache_http_requests_total{route="/api/v1/elements/{id}/image",method="GET",status="200"}"#)
        }

        /// The value of the series named `series` (with its labels, as rendered), -1 without it; 0 before it exists
        /// would hide a renamed series.
        private func metric(_ series: String) -> Int {
            dependencies.metrics.render().split(separator: "\n").first { $0.hasPrefix(series + " ") }
                .flatMap { Int($0.split(separator: " ").last ?? "") } ?? -1
        }

        func stop() async {
            running.cancel()
            _ = await running.result
            await harness.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }
}

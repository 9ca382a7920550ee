import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ImageCore
import Testing
import TestSupport
import TileCacheOrigin
import TileCacheService

@Suite("Service: the fast path answers images in memory as the router does", .timeLimit(.minutes(5)), .heavy)
struct FastPathTests {
    /// What a client sees of an answer: status, headers in order (without `Date`, and without a generated request ID),
    /// and the body's bytes.
    struct Seen: Equatable, CustomStringConvertible {
        var status: Int
        var headers: [String]
        var body: [UInt8]
        var description: String { "\(status) \(headers) \(body.count) bytes" }
    }

    static func seen(_ response: TestResponse, keepRequestID: Bool) -> Seen {
        let headers = response.headers.filter { field in
            field.name != .date && (keepRequestID || field.name.canonicalName != "x-request-id")
        }.map { "\($0.name.canonicalName): \($0.value)" }
        return Seen(status: Int(response.status.code), headers: headers, body: response.bytes)
    }

    /// The requests replayed: every image route (the API's two, the tile host's and the photo host's two paths), with
    /// options, HEAD, conditional requests for an original and a variant, another spelling, CORS and a client's request
    /// ID, and the errors an image route gives (unknown element, no photo, a bad option, a wrong spelling of the host's
    /// path); with the status each answer must have.
    static let cases: [(uri: String, method: HTTPRequest.Method, headers: HTTPFields, conditional: Bool, status: HTTPResponse.Status)] = [
        ("/api/v1/elements/26/thumbnail", .get, [:], false, .ok),
        ("/api/v1/elements/iron/image", .get, [:], false, .ok),
        ("/api/v1/elements/iron/image", .get, [:], true, .notModified),
        ("/periodictable/Tiles/026/s7.JPG", .get, [.origin: "http://app.example"], false, .ok),
        // The same image for another page and for no page: the decorated head remembered for the listed origin (its
        // Access-Control fields) is not theirs.
        ("/periodictable/Tiles/026/s7.JPG", .get, [.origin: "http://elsewhere.example"], false, .ok),
        ("/periodictable/Tiles/026/s7.JPG", .get, [:], false, .ok),
        ("/periodictable/Tiles/026/s7.JPG", .head, [.origin: "http://app.example"], false, .ok),
        ("/periodictable/Tiles/026/s7.JPG?w=64", .get, [:], false, .ok),
        ("/iron.jpg", .get, [.origin: "http://elsewhere.example"], false, .ok),
        ("/iron.jpg?w=32&format=webp", .head, [:], false, .ok),
        ("/images-of-elements/iron.jpg", .head, [:], false, .ok),
        ("/images-of-elements/caesium.jpg", .get, [:], false, .ok),
        ("/api/v1/elements/26/thumbnail?w=64", .get, [HTTPField.Name("X-Request-ID")!: "client-7"], false, .ok),
        ("/api/v1/elements/26/thumbnail?w=48&format=png", .get, [:], true, .notModified),
        ("/api/v1/elements/Fe/thumbnail", .get, [:], true, .notModified),
        ("/api/v1/elements/26/thumbnail?w=40", .get, [.accept: "image/webp,*/*"], false, .ok),
        ("/api/v1/elements/999/thumbnail", .get, [:], false, .notFound),
        ("/api/v1/elements/95/image", .get, [:], false, .notFound),
        ("/api/v1/elements/26/thumbnail?w=abc", .get, [:], false, .badRequest),
        ("/Iron.jpg", .get, [:], false, .notFound),
        ("/periodictable/Tiles/26/s7.JPG", .head, [:], false, .notFound),
        // Placeholders are text: the router's (compressed for the client's Accept-Encoding, `Vary: Accept-Encoding`).
        ("/api/v1/elements/26/thumbnail?format=placeholder", .get, [.acceptEncoding: "gzip"], false, .ok),
        ("/api/v1/elements/26/thumbnail?w=64&format=blurhash", .get, [:], false, .ok),
    ]

    /// Whether a case asks for a placeholder, which the router answers.
    static func isPlaceholder(_ uri: String) -> Bool {
        ["placeholder", "blurhash", "thumbhash"].contains { uri.contains("format=\($0)") }
    }

    /// The third request of each case (the first fills the memory tier, unless another route already did; the second
    /// and third must be answered alike), and how many of them the fast path answered.
    static func answers(fastPath: Bool) async throws -> (seen: [Seen], fastPathAnswers: [Int], requestLines: [String]) {
        try await withService(try await .start { $0.fastPath = fastPath; $0.cors = try! CORSPolicy(parsing: "http://app.example") }) { client, _ in
            var seen: [Seen] = []
            var fastPathAnswers: [Int] = []
            for (uri, method, headers, conditional, status) in cases {
                let first = try await client.execute(uri: uri, method: .get, headers: headers)
                #expect(first.status == (status == .notModified ? .ok : status), "\(uri)")
                var again = headers
                if conditional {
                    let etag: String = try #require(first.headers[.eTag])
                    again[.ifNoneMatch] = etag
                }
                // The second request makes the fast path's answer and remembers its decorated head; the third gets the
                // remembered one: each must be the router's.
                var answers: [Seen] = []
                var counted: [Int] = []
                for _ in 0..<2 {
                    let before = try await Self.fastPathCount(client)
                    let again = try await client.execute(uri: uri, method: method, headers: again)
                    counted.append(try await Self.fastPathCount(client) - before)
                    #expect(again.status == status && (status != .ok || again.headers[HTTPField.Name("X-TileCache-Source")!] == "memory"),
                            "\(uri): \(again.status)")
                    answers.append(Self.seen(again, keepRequestID: headers[HTTPField.Name("X-Request-ID")!] != nil))
                }
                #expect(answers[0] == answers[1] && counted[0] == counted[1], "\(uri): the third answer is the second's")
                fastPathAnswers.append(counted[1])
                seen.append(answers[1])
            }
            // A conditional request for a variant not in memory whose source is: the fast path looks, then leaves it to
            // the route, and the pipeline's counts must be the route's alone (compared below).
            #expect(try await client.execute(uri: "/api/v1/elements/30/thumbnail", method: .get).status == .ok)
            let other = try await client.execute(uri: "/api/v1/elements/30/thumbnail?w=50", method: .get, headers: [.ifNoneMatch: "\"other\""])
            #expect(other.status == .ok && other.headers[HTTPField.Name("X-TileCache-Source")!] == "resized")
            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            let lines = metrics.split(separator: "\n").map(String.init)
            let requests = lines.filter { $0.hasPrefix("tilecache_http_requests_total{") || $0.hasPrefix("tilecache_image_requests_total{") }.sorted()
            return (seen, fastPathAnswers, requests)
        }
    }

    @Test("the same status, headers, bytes and metrics with the fast path as through the router")
    func sameAnswers() async throws {
        let routed = try await Self.answers(fastPath: false)
        let fast = try await Self.answers(fastPath: true)
        #expect(routed.fastPathAnswers.allSatisfy { $0 == 0 })
        // Every image in memory is the fast path's to answer; every error and placeholder is the router's.
        let expected = Self.cases.map { ($0.status == .ok || $0.status == .notModified) && !Self.isPlaceholder($0.uri) ? 1 : 0 }
        #expect(fast.fastPathAnswers == expected, "the fast path answers every second request that has an image")
        for (index, (router, fastPath)) in zip(routed.seen, fast.seen).enumerated() {
            #expect(router == fastPath, "case \(index)")
        }
        #expect(routed.requestLines == fast.requestLines)
    }

    @Test("a remembered answer is made anew when the image in memory changes: the new ETag, length and bytes, as the router answered them")
    func rememberedAnswerFollowsTheImage() async throws {
        var originConfiguration = OriginServer.Configuration()
        originConfiguration.maxAgeSeconds = 0  // every disk hit is revalidated, so a changed image replaces the old
        let harness = try await ServiceHarness.start(origin: originConfiguration) { $0.pipeline.memoryCountLimit = 1 }
        try await withService(harness) { client, _ in
            let thumbnail = "/api/v1/elements/26/thumbnail"
            func get(_ uri: String) async throws -> TestResponse { try await client.execute(uri: uri, method: .get) }
            let first = try await get(thumbnail)
            // The second is the fast path's first answer (it remembers it), the third starts from the remembered one.
            let before = try await Self.fastPathCount(client)
            let second = try await get(thumbnail), third = try await get(thumbnail)
            #expect(try await Self.fastPathCount(client) == before + 2)
            #expect(Self.seen(second, keepRequestID: false) == Self.seen(third, keepRequestID: false))
            #expect(second.headers[.eTag] == first.headers[.eTag] && third.bytes == first.bytes)
            // The origin's image changes; another image takes the memory tier's one place; the route revalidates.
            harness.origin.setFaults([FaultRule(pathContains: "/026/", fault: .body(.progressive))])
            #expect(try await get("/api/v1/elements/27/thumbnail").status == .ok)
            let routed = try await get(thumbnail)
            #expect(routed.status == .ok && routed.headers[.eTag] != first.headers[.eTag] && routed.bytes != first.bytes)
            let counted = try await Self.fastPathCount(client)
            let changed = try await get(thumbnail), again = try await get(thumbnail)
            #expect(try await Self.fastPathCount(client) == counted + 2)
            for answer in [changed, again] {
                #expect(answer.headers[HTTPField.Name("X-TileCache-Source")!] == "memory")
                #expect(answer.headers[.eTag] == routed.headers[.eTag] && answer.bytes == routed.bytes)
                #expect(answer.headers[.contentLength] == String(routed.bytes.count))
            }
            #expect(Self.seen(changed, keepRequestID: false) == Self.seen(again, keepRequestID: false))
        }
    }

    @Test("pipelined requests are answered in order: an image in memory waits behind a request the router has")
    func pipelinedOrder() async throws {
        var originConfiguration = OriginServer.Configuration()
        originConfiguration.latency = .milliseconds(300)
        try await withService(try await .start(origin: originConfiguration)) { client, _ in
            let port = try #require(client.port)
            #expect(try await client.execute(uri: "/api/v1/elements/26/thumbnail", method: .get).status == .ok)
            // The photo takes the origin's 300 ms; the thumbnail behind it is in memory.
            let cold = try await Self.pipelined(port: port, ["/api/v1/elements/29/image", "/api/v1/elements/26/thumbnail"])
            #expect(cold == ["200 networkFetch", "200 memory", "200 -"])
            let before = try await Self.fastPathCount(client)
            let warm = try await Self.pipelined(port: port, ["/api/v1/elements/29/image", "/api/v1/elements/26/thumbnail"])
            #expect(warm == ["200 memory", "200 memory", "200 -"])
            #expect(try await Self.fastPathCount(client) == before + 2)
        }
    }

    @Test("the idle timeout closes idle connections, not ones busy with requests the fast path answers")
    func idleTimeout() async throws {
        try await withService(try await .start { $0.idleTimeout = .seconds(2) }) { client, _ in
            let port = try #require(client.port)
            #expect(try await client.execute(uri: "/api/v1/elements/26/thumbnail", method: .get).status == .ok)
            let before = try await Self.fastPathCount(client)
            // Python's socket module: one connection, a request every 0.25 s for 4 s (twice the timeout), then silence
            // until the server closes it; it writes how many answers came on it and how long the silence lasted.
            let directory = try makeTemporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try await runPythonClient("keepalive_client.py", ["\(port)", "/api/v1/elements/26/thumbnail", "16", "0.25", directory + "/out"])
            let out = try String(contentsOfFile: directory + "/out", encoding: .utf8).split(separator: " ")
            #expect(out.count == 3 && out[0] == "16" && out[1] == "True", "\(out)")
            let silence = Double(out.last ?? "") ?? 0
            // Closed by the idle timer, not by the client's 60 s timeout. (In full runs the close once came 11.0 s
            // after the last answer: a child process another test had started held the server's socket open, so the
            // close sent no FIN until it exited. `spawnProcess` now gives children no descriptors of ours.)
            #expect(silence >= 1 && silence < 10, "closed \(silence) s after the last answer")
            #expect(try await Self.fastPathCount(client) == before + 16)
        }
    }

    /// Sends `paths` and then `/healthz` with `Connection: close` down one connection in one write (Python's socket
    /// module, not our client); returns each answer's status and `X-TileCache-Source` in the order they came.
    static func pipelined(port: Int, _ paths: [String]) async throws -> [String] {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await runPythonClient("pipelining_client.py", ["\(port)", directory + "/out"] + paths)
        let data = try Data(contentsOf: URL(fileURLWithPath: directory + "/out"))
        // Heads only: split at each status line (bodies are JPEG bytes; Latin-1 keeps every byte).
        let text = String(decoding: data.map { $0 < 0x80 ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
        return text.components(separatedBy: "HTTP/1.1 ").dropFirst().map { answer in
            let status = answer.prefix(3)
            let source = answer.components(separatedBy: "\r\n\r\n")[0].components(separatedBy: "\r\n")
                .first { $0.lowercased().hasPrefix("x-tilecache-source: ") }.map { String($0.dropFirst(20)) } ?? "-"
            return "\(status) \(source)"
        }
    }

    static func fastPathCount(_ client: any TestClientProtocol) async throws -> Int {
        let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
        let line = try #require(metrics.split(separator: "\n").first { $0.hasPrefix("tilecache_http_fast_path_answers_total ") })
        return try #require(Int(line.split(separator: " ")[1]))
    }
}

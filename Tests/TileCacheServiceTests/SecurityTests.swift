import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TileCacheOrigin
import TileCacheService
import TestSupport

/// The service fetches only catalogue images from its configured bases: nothing in a request can make it fetch
/// anything else (server-side request forgery) or read a file.
@Suite("service security", .timeLimit(.minutes(5)), .heavy)
struct ServiceSecurityTests {
    @Test("URLs, paths and odd ids in requests never reach the network or the file system")
    func noRequestForgery() async throws {
        let harness = try await ServiceHarness.start()
        let origin = harness.origin
        try await withService(harness) { client, _ in
            let port = origin.port
            let attempts: [(String, HTTPResponse.Status)] = [
                ("/api/v1/elements/http:%2F%2F127.0.0.1:\(port)%2Fimages-of-elements%2Fgold.jpg/image", .notFound),
                ("/api/v1/elements/..%2F..%2F..%2Fetc%2Fpasswd/thumbnail", .notFound),
                ("/api/v1/elements/26%00/thumbnail", .notFound),
                ("/api/v1/elements/26/thumbnail?url=http://127.0.0.1:\(port)/images-of-elements/gold.jpg", .badRequest),
                ("/api/v1/elements/26/image?src=file:///etc/passwd", .badRequest),
                ("/api/v1/elements/26/thumbnail/../../../../etc/passwd", .notFound),
                ("/%2e%2e/%2e%2e/etc/passwd", .notFound),
            ]
            for (uri, status) in attempts {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == status, "\(uri)")
                #expect(!String(buffer: response.body).contains("root:"), "\(uri)")
            }
            #expect(origin.statistics.requests == 0)
        }
    }

    @Test("favourites: error bodies name no Swift internals; favoritedBy's limit counts scalars; control, format and invisible characters are refused; names are composed")
    func favoriteBodies() async throws {
        try await withService(try await .start()) { client, _ in
            func post(_ bytes: [UInt8]) async throws -> TestResponse {
                try await client.execute(uri: "/api/v1/favorites", method: .post, headers: [.contentType: "application/json"],
                                         body: ByteBuffer(bytes: bytes))
            }
            func post(_ text: String) async throws -> TestResponse { try await post(Array(text.utf8)) }
            let internals = ["DecodingError", "Dictionary<", "Swift.", "typeMismatch", "codingPath"]
            let hostile: [[UInt8]] = [
                Array(#"{"favoritedBy": 1e309, "number": 26}"#.utf8),
                Array(#"{"favoritedBy": "Ada", "number": 1e309}"#.utf8),
                Array(#"{"favoritedBy": "A"#.utf8) + [0xC3, 0x28] + Array(#"", "number": 26}"#.utf8),
                [0xFF, 0xFE, 0x7B, 0x7D],
            ]
            for bytes in hostile {
                let response = try await post(bytes)
                let text = String(decoding: response.body.readableBytesView, as: UTF8.self)
                #expect(response.status == .badRequest, "\(bytes.prefix(40))")
                #expect(!internals.contains { text.contains($0) }, "\(text)")
            }
            let accents = "a" + String(repeating: "\u{301}", count: 5_000)
            let long = try await post(#"{"favoritedBy": "\#(accents)", "number": 26}"#)
            #expect(long.status == .badRequest && long.errorReason == "field-too-long")
            // Controls, bidi overrides, and what draws nothing: zero-width spaces and marks, BOM, tags, separators, fillers
            // (at either end, those that are white space are trimmed like spaces).
            let invisible = ["\u{200B}", "\u{200E}", "\u{200F}", "\u{061C}", "\u{FEFF}", "\u{E0041}", "\u{2028}", "\u{3164}", "\u{200D}"]
            for unsafe in ["Ada\\u0000Lovelace", "\u{202E}ecalevoL adA", "Ada\u{2066}x\u{2069}", "Ada\\u0007"] + invisible.map({ "Ad" + $0 + "a" }) {
                let response = try await post(#"{"favoritedBy": "\#(unsafe)", "number": 26}"#)
                #expect(response.status == .badRequest && response.errorReason == "bad-field", "\(unsafe.unicodeScalars.map { $0.value })")
            }
            // A syntax error is named as the parser found it, not as a number out of range.
            let cut = try await post(#"{"favoritedBy": "Ada", "number":"#)
            #expect(cut.status == .badRequest && String(buffer: cut.body).contains("end of file"), "\(String(buffer: cut.body))")
            #expect(try await post(#"{"favoritedBy": "Ad\#u{E0}\#u{301} Lov\#u{E9}lace", "number": 26}"#).status == .created)
            // Composed and decomposed spellings are one person; emoji joined by U+200D are a name like any other.
            let decomposed = try await post(#"{"favoritedBy": "Ade\#u{301}le", "number": 26}"#)
            #expect(decomposed.status == .created)
            #expect(try decomposed.decoded(as: ServiceJSON.Favorite.self).favoritedBy == "Ad\u{E9}le")
            #expect(try await client.execute(uri: "/api/v1/favorites?favoritedBy=Ad%C3%A9le", method: .get).decoded(as: [ServiceJSON.Favorite].self).count == 1)
            #expect(try await post(#"{"favoritedBy": "Ada \#u{1F469}\#u{200D}\#u{1F52C}", "number": 26}"#).status == .created)
            #expect(try await client.execute(uri: "/api/v1/favorites", method: .get).decoded(as: [ServiceJSON.Favorite].self).count == 3)
        }
    }

    @Test("the page and its files: a CSP with no inline script and no framing, X-Frame-Options DENY, nosniff",
          arguments: ["/", "/app.js", "/app.css", "/openapi.yaml"])
    func pageHeaders(path: String) async throws {
        try await withService(try await .start()) { client, _ in
            let response = try await client.execute(uri: path, method: .get)
            let csp = try #require(response.headers[.contentSecurityPolicy])
            #expect(csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'") && !csp.contains("unsafe-inline"))
            #expect(response.headers[HTTPField.Name("X-Frame-Options")!] == "DENY")
            #expect(response.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff")
            let trace = try await client.execute(uri: path, method: .trace)
            #expect(trace.status == .methodNotAllowed && trace.headers[.allow] == "GET, HEAD")
        }
    }

    @Test("the JSON's image URLs are never made from the request's Host: paths by default, --public-url's base when given")
    func hostHeaderCannotSteerURLs() async throws {
        let poisoned: HTTPFields = [HTTPField.Name("Host")!: "evil.example.com", HTTPField.Name("X-Forwarded-Host")!: "evil.example.com"]
        try await withService(try await .start()) { client, _ in
            for uri in ["/api/v1/elements/11", "/api/v1/elements"] {
                let response = try await client.execute(uri: uri, method: .get, headers: poisoned)
                let text = String(buffer: response.body)
                #expect(response.status == .ok && !text.contains("evil.example.com"), "\(uri)")
                #expect(text.contains(#""thumbnail_url":"\/api\/v1\/elements\/11\/thumbnail""#) || text.contains(#""thumbnail_url":"/api/v1/elements/11/thumbnail""#), "\(uri)")
            }
        }
        try await withService(try await .start { $0.publicURL = try! ServiceConfiguration.publicURL(parsing: "https://tiles.example.com/") }) { client, _ in
            let sodium = try await client.execute(uri: "/api/v1/elements/11", method: .get, headers: poisoned).decoded(as: ServiceJSON.Element.self)
            #expect(sodium.thumbnailURL == "https://tiles.example.com/api/v1/elements/11/thumbnail")
            #expect(sodium.imageURL == "https://tiles.example.com/api/v1/elements/11/image")
        }
        for bad in ["tiles.example.com", "ftp://tiles.example.com", "https://tiles.example.com/?x=1", "https://user@tiles.example.com", "https://"] {
            #expect(throws: ServiceConfigurationError.self, "\(bad)") { try ServiceConfiguration.publicURL(parsing: bad) }
        }
        #expect(try ServiceConfiguration.publicURL(parsing: "http://127.0.0.1:8080/tiles/") == "http://127.0.0.1:8080/tiles")
    }

    @Test("--trusted-proxies: X-Forwarded-Host and -Proto make the JSON's URLs from a trusted peer only; --public-url wins; other peers' are dropped")
    func trustedProxies() async throws {
        let forwarded: HTTPFields = [HTTPField.Name("X-Forwarded-Host")!: "tiles.example.com", HTTPField.Name("X-Forwarded-Proto")!: "https"]
        // The test client's peer address is 127.0.0.1: trusted by the first, not by the second.
        for (proxies, expected) in [("127.0.0.0/8,::1", "https://tiles.example.com/api/v1/elements/11/thumbnail"),
                                    ("10.0.0.0/8, fd00::/8", "/api/v1/elements/11/thumbnail")] {
            let trusted = try TrustedProxies(parsing: proxies)
            try await withService(try await .start { $0.trustedProxies = trusted }) { client, _ in
                let sodium = try await client.execute(uri: "/api/v1/elements/11", method: .get, headers: forwarded).decoded(as: ServiceJSON.Element.self)
                #expect(sodium.thumbnailURL == expected, "\(proxies)")
                let list = try await client.execute(uri: "/api/v1/elements?symbol=Na", method: .get, headers: forwarded).decoded(as: [ServiceJSON.Element].self)
                #expect(list.first?.imageURL == expected.replacingOccurrences(of: "thumbnail", with: "image"), "\(proxies)")
                // A host that is not a host name is never used.
                let odd = try await client.execute(uri: "/api/v1/elements/11", method: .get,
                                                   headers: [HTTPField.Name("X-Forwarded-Host")!: "evil.example/x?"]).decoded(as: ServiceJSON.Element.self)
                #expect(odd.thumbnailURL == "/api/v1/elements/11/thumbnail")
            }
        }
        let both = try await ServiceHarness.start {
            $0.trustedProxies = try! TrustedProxies(parsing: "127.0.0.1")
            $0.publicURL = "https://cdn.example.net"
        }
        try await withService(both) { client, _ in
            let sodium = try await client.execute(uri: "/api/v1/elements/11", method: .get, headers: forwarded).decoded(as: ServiceJSON.Element.self)
            #expect(sodium.thumbnailURL == "https://cdn.example.net/api/v1/elements/11/thumbnail")
        }
        for bad in ["10.0.0.0/33", "example.com", "1.2.3", "::1/129", "10.0.0.0/x"] {
            #expect(throws: ServiceConfigurationError.self, "\(bad)") { try TrustedProxies(parsing: bad) }
        }
    }
}

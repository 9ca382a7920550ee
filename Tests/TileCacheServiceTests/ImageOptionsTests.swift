import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ImageCore
import Testing
import TestSupport
import TileCacheService

/// The thumbnail options of image URLs through the service: sizes, fit, dpr, quality, formats, negotiation, keys.
@Suite("Service: image options")
struct ImageOptionsTests {
    static let source = HTTPField.Name("X-TileCache-Source")!

    @Test("w, h, fit, dpr, q and format make the variant asked for; Accept picks WebP, with Vary: Accept; each is its own entry")
    func options() async throws {
        try await withService(try await .start()) { client, _ in
            func get(_ query: String, accept: String? = nil) async throws -> TestResponse {
                var headers: HTTPFields = [:]
                if let accept { headers[.accept] = accept }
                let response = try await client.execute(uri: "/api/v1/elements/79/image?\(query)", method: .get, headers: headers)
                #expect(response.status == .ok, "\(query): \(response.errorReason ?? "")")
                return response
            }
            let original = try ImageInspector().inspectHeader(try await get("v=1").bytes, subject: "gold")
            let cover = try await get("w=100&h=100&fit=cover")
            #expect(cover.headers[.contentType] == "image/jpeg" && cover.headers[.vary] == "Accept")
            let coverHeader = try ImageInspector().inspectHeader(cover.bytes, subject: "cover")
            #expect(coverHeader.format == .jpeg && coverHeader.width == 100 && coverHeader.height == 100)

            let browser = "image/avif,image/webp,image/apng,image/*,*/*;q=0.8"  // what Chrome sends for <img>
            let webp = try await get("w=100&h=100&fit=cover", accept: browser)
            #expect(webp.headers[.contentType] == "image/webp" && ImageFormat.sniff(webp.bytes) == .webp)
            #expect(webp.headers[.vary] == "Accept" && webp.headers[.eTag] != cover.headers[.eTag])
            // The JPEG is still the JPEG: the negotiated format is part of the key.
            let again = try await get("w=100&h=100&fit=cover", accept: "image/jpeg,*/*")
            #expect(again.headers[.contentType] == "image/jpeg" && again.headers[Self.source] == "memory")
            #expect(try await get("w=100", accept: "image/webp;q=0").headers[.contentType] == "image/jpeg")

            let png = try await get("w=100&format=png", accept: browser)
            #expect(png.headers[.contentType] == "image/png" && png.headers[.vary] == nil && ImageFormat.sniff(png.bytes) == .png)

            let retina = try await get("w=64&dpr=2")
            let plain = try await get("w=128")
            #expect(retina.headers[.eTag] == plain.headers[.eTag] && plain.headers[Self.source] == "memory")
            #expect(try ImageInspector().inspectHeader(retina.bytes, subject: "dpr").width == 128)

            #expect(try await get("w=128&q=40").bytes.count < plain.bytes.count)

            let wide = try await get("w=\(original.width * 2)")
            #expect(try ImageInspector().inspectHeader(wide.bytes, subject: "wide").width == original.width)  // not enlarged
            let enlarged = try await get("w=\(original.width * 2)&enlarge=1")
            #expect(try ImageInspector().inspectHeader(enlarged.bytes, subject: "enlarged").width == original.width * 2)
            let tall = try await get("h=50")
            #expect(try ImageInspector().inspectHeader(tall.bytes, subject: "tall").height == 50)
        }
    }

    @Test("cache-busters and tracking parameters are ignored for the image and its key")
    func ignoredParameters() async throws {
        try await withService(try await .start()) { client, _ in
            let first = try await client.execute(uri: "/api/v1/elements/26/thumbnail?w=64", method: .get)
            for query in ["w=64&v=2", "cb=123&w=64", "w=64&t=99&utm_source=mail&utm_campaign=x", "w=64&_=1700000000"] {
                let response = try await client.execute(uri: "/api/v1/elements/26/thumbnail?\(query)", method: .get)
                #expect(response.status == .ok && response.headers[.eTag] == first.headers[.eTag], "\(query)")
                #expect(response.headers[Self.source] == "memory", "\(query)")
            }
            let original = try await client.execute(uri: "/api/v1/elements/26/thumbnail?v=7", method: .get)
            #expect(original.headers[.vary] == nil && original.headers[.contentType] == "image/jpeg")
        }
    }

    @Test("a repeated option, a bad value or an output over the bounds is a 400 naming the parameter",
          arguments: [("w=100&w=200", "repeated-parameter", "'w'"), ("h=0", "bad-height", "h must"), ("fit=crop", "bad-fit", "fit must"),
                      ("w=10&dpr=4", "bad-dpr", "dpr must"), ("w=10&dpr=x", "bad-dpr", "dpr must"), ("q=0", "bad-quality", "q must"),
                      ("q=101", "bad-quality", "q must"), ("format=gif", "bad-format", "format must"), ("enlarge=2", "bad-enlarge", "enlarge must"),
                      ("w=4096&h=4096", "output-too-large", "16000000"), ("w=3000&dpr=2", "output-too-large", "w x dpr"),
                      ("w=64&size=2", "unknown-parameter", "'size'")])
    func badOptions(query: String, reason: String, mention: String) async throws {
        try await withService(try await .start()) { client, _ in
            let response = try await client.execute(uri: "/api/v1/elements/79/image?\(query)", method: .get)
            #expect(response.status == .badRequest && response.errorReason == reason, "\(query)")
            let message = (response.json?["error"] as? [String: Any])?["message"] as? String ?? ""
            #expect(message.contains(mention), "\(query): \(message)")
        }
    }

    @Test("an output that would exceed the bounds once fitted to the source is a 400 too (enlarge to 4096 px high)")
    func boundsAfterFitting() async throws {
        try await withService(try await .start()) { client, _ in
            let response = try await client.execute(uri: "/api/v1/elements/79/image?h=4096&enlarge=1", method: .get)
            #expect(response.status == .badRequest && response.errorReason == "output-too-large")
        }
    }

    @Test("ETags are per variant; a 304 for a variant is answered from its source's validators, without resizing")
    func conditional() async throws {
        // A memory tier too small to hold anything: every variant GET resizes again, unless it is a 304.
        let harness = try await ServiceHarness.start { $0.pipeline.memoryCostLimit = 1 }
        try await withService(harness) { client, _ in
            let small = try await client.execute(uri: "/api/v1/elements/26/thumbnail?w=64", method: .get)
            let large = try await client.execute(uri: "/api/v1/elements/26/thumbnail?w=96", method: .get)
            let original = try await client.execute(uri: "/api/v1/elements/26/thumbnail", method: .get)
            let tags = [small, large, original].compactMap { $0.headers[.eTag] }
            #expect(Set(tags).count == 3)
            func resized() async throws -> Int? {
                try await client.execute(uri: "/api/v1/stats", method: .get).json?["resized"] as? Int
            }
            let before = try await resized()
            #expect(before == 2)
            let etag = try #require(small.headers[.eTag])
            let notModified = try await client.execute(uri: "/api/v1/elements/26/thumbnail?w=64", method: .get, headers: [.ifNoneMatch: etag])
            #expect(notModified.status == .notModified && notModified.headers[.eTag] == etag && notModified.body.readableBytes == 0)
            #expect(try await resized() == before)
            // Another variant's ETag is not a match: that one is made and sent.
            let other = try await client.execute(uri: "/api/v1/elements/26/thumbnail?w=96", method: .get, headers: [.ifNoneMatch: etag])
            #expect(other.status == .ok && other.headers[.eTag] == large.headers[.eTag])
            #expect(try await resized() == (before ?? 0) + 1)
        }
    }
}

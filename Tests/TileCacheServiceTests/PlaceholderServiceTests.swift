import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ImageCore
import Testing
import TestSupport
import TileCacheOrigin
import TileCacheService

/// Placeholders through the service: `format=blurhash|thumbhash|placeholder`, `…/info`, the element API's keys.
@Suite("Service: placeholders", .timeLimit(.minutes(5)), .heavy)
struct PlaceholderServiceTests {
    /// `format=placeholder`'s JSON, as a front end decodes it.
    struct Placeholder: Decodable, Equatable {
        var blurhash: String
        var thumbhash: String
        var average_color: String
        var average_alpha: Double
        var dominant_color: String
        var lqip: String
    }

    @Test("format=blurhash, thumbhash and placeholder: one placeholder made once, three representations with their own ETags, 304s, memory hits")
    func formats() async throws {
        try await withService(try await .start()) { client, _ in
            func get(_ query: String, etag: String? = nil) async throws -> TestResponse {
                var headers: HTTPFields = [:]
                if let etag { headers[.ifNoneMatch] = etag }
                return try await client.execute(uri: "/api/v1/elements/26/image?\(query)", method: .get, headers: headers)
            }
            let json = try await get("format=placeholder")
            #expect(json.status == .ok && json.headers[.contentType]?.hasPrefix("application/json") == true)
            let placeholder = try json.decoded(as: Placeholder.self)
            let blurhash = try await get("format=blurhash")
            #expect(blurhash.headers[.contentType] == "text/plain; charset=utf-8" && String(buffer: blurhash.body) == placeholder.blurhash)
            #expect(blurhash.headers[ImageOptionsTests.source] == "memory")  // the placeholder was made once
            let thumbhash = try await get("format=thumbhash")
            #expect(String(buffer: thumbhash.body) == placeholder.thumbhash)
            #expect(Data(base64Encoded: placeholder.thumbhash).map { $0.count >= 5 } == true)
            #expect(placeholder.lqip.hasPrefix("data:image/webp;base64,") && placeholder.lqip.count < 600)
            #expect(placeholder.average_color.count == 7 && placeholder.dominant_color.count == 7 && placeholder.average_alpha == 1)
            let tags = [json, blurhash, thumbhash].compactMap { $0.headers[.eTag] }
            #expect(Set(tags).count == 3, "\(tags)")
            for (query, tag) in zip(["format=placeholder", "format=blurhash", "format=thumbhash"], tags) {
                let again = try await get(query, etag: tag)
                #expect(again.status == .notModified && again.headers[.eTag] == tag, "\(query)")
            }
            // A variant's placeholder is its own: made from the variant's pixels.
            let cropped = try await get("w=64&h=64&fit=cover&format=placeholder").decoded(as: Placeholder.self)
            #expect(cropped.blurhash != placeholder.blurhash && BlurHashShape.components(cropped.blurhash) == (4, 4))
            let bad = try await get("format=gif")
            #expect(bad.status == .badRequest && String(buffer: bad.body).contains("blurhash"))
        }
    }

    @Test("…/info has the original's placeholder, imgproxy's names where it has them (blurhash, average {R,G,B,A})")
    func info() async throws {
        struct Info: Decodable {
            struct RGBA: Decodable { var R: Int, G: Int, B: Int, A: Int }
            var width: Int, height: Int, blurhash: String, thumbhash: String, average: RGBA
            var averageColor: String, dominantColor: String, lqip: String
        }
        try await withService(try await .start()) { client, _ in
            let info = try await client.execute(uri: "/api/v1/elements/26/image/info", method: .get).decoded(as: Info.self)
            let placeholder = try await client.execute(uri: "/api/v1/elements/26/image?format=placeholder", method: .get)
                .decoded(as: Placeholder.self)
            #expect(info.blurhash == placeholder.blurhash && info.thumbhash == placeholder.thumbhash && info.lqip == placeholder.lqip)
            #expect(info.averageColor == placeholder.average_color && info.dominantColor == placeholder.dominant_color)
            let hex = String(format: "#%02x%02x%02x", info.average.R, info.average.G, info.average.B)
            #expect(hex == info.averageColor && info.average.A == 255)
            // Components follow the photo's aspect ratio: 4 along the longer side, the other in proportion (computed on
            // the 32-px image the placeholder is made from, so within a pixel's rounding of the photo's own ratio).
            let (x, y) = BlurHashShape.components(info.blurhash)
            let (long, short) = info.width >= info.height ? (x, y) : (y, x)
            let ratio = Double(min(info.width, info.height)) / Double(max(info.width, info.height))
            #expect(long == 4 && abs(Double(short) - 4 * ratio) <= 0.6, "\(x)x\(y) for \(info.width)x\(info.height)")
        }
    }

    @Test("a thumbnail host that does not answer in time never holds the element API up: the records go out with null placeholders")
    func slowHost() async throws {
        struct Record: Decodable { var number: Int, thumbnail_blurhash: String? }
        var slow = OriginServer.Configuration()
        slow.latency = .seconds(8)  // past the 3-s wait, and no longer: the loads still going hold the harness's stop
        try await withService(try await .start(origin: slow) { $0.elementPlaceholders = true }) { client, _ in
            let list = try await client.execute(uri: "/api/v1/elements?limit=3", method: .get)
            #expect(list.status == .ok)
            #expect(try list.decoded(as: [Record].self).map(\.thumbnail_blurhash) == [nil, nil, nil])
            let one = try await client.execute(uri: "/api/v1/elements/Fe", method: .get)
            let record = try one.decoded(as: Record.self)
            #expect(one.status == .ok && record.thumbnail_blurhash == nil)
        }
    }

    @Test("element records carry their thumbnail's placeholder: the same as the thumbnail's format=placeholder; seed clients' models still decode them")
    func elementRecords() async throws {
        /// The seed app's model: only the keys it knows.
        struct SeedElement: Decodable { var name: String, symbol: String, number: Int, id: String }
        struct Record: Decodable {
            var number: Int
            var thumbnail_blurhash: String?, thumbnail_thumbhash: String?, thumbnail_color: String?, thumbnail_lqip: String?
        }
        try await withService(try await .start { $0.elementPlaceholders = true }) { client, _ in
            let list = try await client.execute(uri: "/api/v1/elements?limit=5&sortBy=name", method: .get)
            #expect(try list.decoded(as: [SeedElement].self).count == 5)
            let records = try list.decoded(as: [Record].self)
            for record in records {
                let placeholder = try await client.execute(uri: "/api/v1/elements/\(record.number)/thumbnail?format=placeholder", method: .get)
                    .decoded(as: Placeholder.self)
                #expect(record.thumbnail_blurhash == placeholder.blurhash && record.thumbnail_thumbhash == placeholder.thumbhash)
                #expect(record.thumbnail_color == placeholder.dominant_color && record.thumbnail_lqip == placeholder.lqip)
            }
            let one = try await client.execute(uri: "/api/v1/elements/Fe", method: .get).decoded(as: Record.self)
            #expect(one.thumbnail_blurhash != nil && one.thumbnail_lqip?.hasPrefix("data:image/webp;base64,") == true)
            // The placeholder keys are not searched: a BlurHash's letters never match a search.
            let blurhash = try #require(one.thumbnail_blurhash)
            let searched = try await client.execute(uri: "/api/v1/elements?search=\(blurhash.prefix(6).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")",
                                                    method: .get).decoded(as: [Record].self)
            #expect(searched.isEmpty)
        }
        // --no-element-placeholders: the records as before, no key added.
        try await withService(try await .start()) { client, _ in
            let raw = try await client.execute(uri: "/api/v1/elements/Fe", method: .get)
            let keys = try #require(try JSONSerialization.jsonObject(with: Data(raw.bytes)) as? [String: Any]).keys
            #expect(!keys.contains { $0.hasPrefix("thumbnail_") && $0 != "thumbnail_url" })
        }
    }
}

/// The components a BlurHash string declares (its first character).
enum BlurHashShape {
    static func components(_ hash: String) -> (Int, Int) {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")
        guard let first = hash.first, let value = alphabet.firstIndex(of: first) else { return (0, 0) }
        return (value % 9 + 1, value / 9 + 1)
    }
}

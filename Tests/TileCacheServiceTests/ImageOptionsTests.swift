import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ImageCore
import Testing
import TestSupport
import TileCacheService

/// The thumbnail options of image URLs through the service: sizes, fit, dpr, quality, formats, negotiation, keys.
@Suite("Service: image options", .timeLimit(.minutes(5)), .heavy)
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

    @Test("--auto-avif: Chromium's Accept gets AVIF before WebP on the catalogue's routes, each its own variant with Vary: Accept; format=avif always")
    func avifNegotiation() async throws {
        let chromium = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
        try await withService(try await .start { $0.autoAVIF = true }) { client, _ in
            func get(_ query: String, accept: String?) async throws -> TestResponse {
                var headers: HTTPFields = [:]
                if let accept { headers[.accept] = accept }
                let response = try await client.execute(uri: "/api/v1/elements/79/image?\(query)", method: .get, headers: headers)
                #expect(response.status == .ok, "\(query): \(response.errorReason ?? "")")
                return response
            }
            let avif = try await get("w=64", accept: chromium)
            #expect(avif.headers[.contentType] == "image/avif" && avif.headers[.vary] == "Accept")
            let header = try ImageInspector().inspectHeader(avif.bytes, subject: "avif")
            #expect(header.format == .avif && header.width == 64)
            let webp = try await get("w=64", accept: "image/webp,*/*")
            #expect(webp.headers[.contentType] == "image/webp" && webp.headers[.eTag] != avif.headers[.eTag])
            #expect(try await get("w=64", accept: "*/*").headers[.contentType] == "image/jpeg")
            #expect(try await get("w=64", accept: chromium).headers[Self.source] == "memory")
        }
        // Without --auto-avif the same browser gets WebP; a URL that names AVIF gets it from any service.
        try await withService(try await .start()) { client, _ in
            var headers: HTTPFields = [:]
            headers[.accept] = chromium
            let webp = try await client.execute(uri: "/api/v1/elements/79/image?w=64", method: .get, headers: headers)
            #expect(webp.headers[.contentType] == "image/webp")
            let named = try await client.execute(uri: "/api/v1/elements/79/image?w=64&format=avif", method: .get)
            #expect(named.headers[.contentType] == "image/avif" && named.headers[.vary] == nil)
            #expect(ImageFormat.sniff(named.bytes) == .avif)
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
            let message = (try? response.decoded(as: ServiceJSON.ErrorBody.self))?.error.message ?? ""
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

    @Test("a variant is the same bytes however it was made: cold, or from an original already in memory (one ETag, one body)")
    func variantsAreDeterministic() async throws {
        let queries = ["w=96", "w=64&format=png", "w=200&h=100&fit=cover", "w=50&dpr=2", "w=300&q=60"]
        let paths = ["/api/v1/elements/30/image", "/api/v1/elements/79/thumbnail", "/api/v1/elements/26/image"]
        // Cold: the variant is made from the download (whose pixels were decoded to validate it).
        let made = try await withService(try await .start()) { client, _ in
            var made: [String: (etag: String?, bytes: [UInt8])] = [:]
            for path in paths {
                for query in queries {
                    let response = try await client.execute(uri: "\(path)?\(query)", method: .get)
                    #expect(response.status == .ok)
                    made["\(path)?\(query)"] = (response.headers[.eTag], response.bytes)
                }
            }
            return made
        }
        // Warm: another service (its own caches) fetches each original first, then the variants from it.
        try await withService(try await .start()) { client, _ in
            for path in paths {
                #expect(try await client.execute(uri: path, method: .get).status == .ok)
                for query in queries {
                    let response = try await client.execute(uri: "\(path)?\(query)", method: .get)
                    let cold = try #require(made["\(path)?\(query)"])
                    #expect(response.headers[.eTag] == cold.etag, "\(path)?\(query)")
                    #expect(response.bytes.elementsEqual(cold.bytes), "\(path)?\(query): \(response.bytes.count) bytes warm, \(cold.bytes.count) cold")
                }
            }
        }
    }

    @Test("ETags are per variant; a 304 for a variant is answered from its source's validators, without resizing")
    func conditional() async throws {
        // A memory tier too small to hold anything, and the variants removed from disk below: every variant GET resizes
        // again, unless it is a 304.
        let harness = try await ServiceHarness.start { $0.pipeline.memoryCostLimit = 1 }
        try await withService(harness) { client, dependencies in
            let small = try await client.execute(uri: "/api/v1/elements/26/thumbnail?w=64", method: .get)
            let large = try await client.execute(uri: "/api/v1/elements/26/thumbnail?w=96", method: .get)
            let original = try await client.execute(uri: "/api/v1/elements/26/thumbnail", method: .get)
            let tags = [small, large, original].compactMap { $0.headers[.eTag] }
            #expect(Set(tags).count == 3)
            func resized() async throws -> Int? {
                try await client.execute(uri: "/api/v1/stats", method: .get).decoded(as: ServiceJSON.Stats.self).resized
            }
            let before = try await resized()
            #expect(before == 2)
            let disk = try #require(dependencies.pipeline.diskCache)
            let variants = await disk.allMetadata().filter { $0.url.contains("#") }
            #expect(variants.count == 2)  // both variants were stored beside their source
            for variant in variants { await disk.remove(variant.url) }
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

    /// The signature of `path` with `options` (`w=64&format=webp`), computed by Python's hmac module as a front end
    /// would: no code of ours involved.
    static func pythonSignature(keyHex: String, saltHex: String, path: String, options: String) async throws -> String {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await runPythonClient("variant_signature.py", [keyHex, saltHex, path, options, directory + "/sig"])
        return try String(contentsOfFile: directory + "/sig", encoding: .utf8)
    }

    @Test("with a signing key, variants need imgproxy-style signatures: missing or wrong is 403 JSON; originals stay open")
    func signing() async throws {
        let (key, salt) = ("943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881", "520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5")
        let harness = try await ServiceHarness.start { $0.signer = try! URLSigner(keyHex: key, saltHex: salt) }
        try await withService(harness) { client, _ in
            let path = "/api/v1/elements/79/image"
            let signature = try await Self.pythonSignature(keyHex: key, saltHex: salt, path: path, options: "w=64&format=webp")
            // The options in another order, and a tracking parameter added after signing: still the same signature.
            let signed = try await client.execute(uri: "\(path)?format=webp&w=64&utm_source=mail&sig=\(signature)", method: .get)
            #expect(signed.status == .ok && signed.headers[.contentType] == "image/webp", "\(signed.errorReason ?? "")")
            let missing = try await client.execute(uri: "\(path)?w=64&format=webp", method: .get)
            #expect(missing.status == .forbidden && missing.errorReason == "missing-signature")
            let otherWidth = try await client.execute(uri: "\(path)?w=65&format=webp&sig=\(signature)", method: .get)
            #expect(otherWidth.status == .forbidden && otherWidth.errorReason == "bad-signature")
            let otherPath = try await client.execute(uri: "/api/v1/elements/80/image?w=64&format=webp&sig=\(signature)", method: .get)
            #expect(otherPath.status == .forbidden && otherPath.errorReason == "bad-signature")
            let garbage = try await client.execute(uri: "\(path)?w=64&format=webp&sig=%%%", method: .get)
            #expect(garbage.status == .forbidden && garbage.errorReason == "bad-signature")
            #expect(try await client.execute(uri: path, method: .get).status == .ok)  // no options: nothing to sign
            #expect(try await client.execute(uri: "\(path)?v=3", method: .get).status == .ok)
        }
        #expect(throws: URLSignerError.self) { try URLSigner(keyHex: "xyz", saltHex: "") }
        #expect(throws: URLSignerError.self) { try URLSigner(keyHex: "", saltHex: "") }
    }

    @Test("--allowed-widths bounds a source's variants to its widths in each format: other widths are width-not-allowed, h, fit, q and enlarge option-not-allowed")
    func allowedWidths() async throws {
        let harness = try await ServiceHarness.start { $0.allowedWidths = [64, 128] }
        try await withService(harness) { client, _ in
            let path = "/api/v1/elements/26/thumbnail"
            let allowed = ["w=64", "w=64&dpr=2", "w=32&dpr=2", "w=128", "w=64&format=png", "w=64&format=webp", "format=png", "v=7"]
            for query in allowed {
                let response = try await client.execute(uri: "\(path)?\(query)", method: .get)
                #expect(response.status == .ok, "\(query): \(response.errorReason ?? "")")
            }
            for query in ["w=100", "w=96&dpr=1.5", "w=65"] {
                #expect(try await client.execute(uri: "\(path)?\(query)", method: .get).errorReason == "width-not-allowed", "\(query)")
            }
            // Each of these made a variant of its own before: the issue counted 10 from one allowed width.
            let refused = ["h=100", "h=101", "h=37", "q=17", "q=18", "w=64&h=1&fit=fill", "w=64&fit=cover", "w=64&q=90",
                           "w=128&enlarge=1", "fit=inside"]
            for query in refused {
                let response = try await client.execute(uri: "\(path)?\(query)", method: .get)
                #expect(response.status == .badRequest && response.errorReason == "option-not-allowed", "\(query)")
                let option = String(query.split(separator: "&").first { !$0.hasPrefix("w=") }?.split(separator: "=").first ?? "")
                #expect(String(buffer: response.body).contains("\(option) is not allowed here"), "\(query)")
            }
            // Made: 64 (JPEG, twice asked for: w=64, w=32&dpr=2), 128, 64 PNG, 64 WebP, the original as PNG.
            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            let resized = metrics.split(separator: "\n").first { $0.hasPrefix("tilecache_image_resized_total") }
            #expect(resized.flatMap { Double($0.split(separator: " ").last ?? "") } == 5, "\(resized ?? "no counter")")
        }
    }

    @Test("--presets: preset=NAME (or pr=NAME) stands for its options, the URL's own override them and are checked; --allowed-qualities; --only-presets refuses every other option")
    func presets() async throws {
        let presets = try ServiceConfiguration.presets(parsing: "thumb:w=64&format=webp, card:w=256&q=80")
        let harness = try await ServiceHarness.start {
            $0.allowedWidths = [64, 128]
            $0.allowedQualities = [60]
            $0.presets = presets
        }
        try await withService(harness) { client, _ in
            let path = "/api/v1/elements/26/thumbnail"
            let thumb = try await client.execute(uri: "\(path)?preset=thumb", method: .get)
            let same = try await client.execute(uri: "\(path)?w=64&format=webp", method: .get)
            #expect(thumb.status == .ok && thumb.headers[.contentType] == "image/webp")
            #expect(thumb.headers[.eTag] != nil && thumb.headers[.eTag] == same.headers[.eTag] && thumb.body == same.body, "a preset is the variant its options make")
            // A preset's options are the operator's: w=256 and q=80 are outside the lists, and allowed.
            #expect(try await client.execute(uri: "\(path)?pr=card", method: .get).status == .ok)
            let png = try await client.execute(uri: "\(path)?preset=thumb&format=png", method: .get)
            #expect(png.status == .ok && png.headers[.contentType] == "image/png", "the URL's format overrides the preset's")
            #expect(try await client.execute(uri: "\(path)?preset=thumb&w=256", method: .get).errorReason == "width-not-allowed", "the URL's own options are checked")
            #expect(try await client.execute(uri: "\(path)?preset=thumb&dpr=2", method: .get).status == .ok, "64 x 2 is listed")
            #expect(try await client.execute(uri: "\(path)?preset=nope", method: .get).errorReason == "unknown-preset")
            #expect(try await client.execute(uri: "\(path)?preset=thumb&pr=card", method: .get).errorReason == "repeated-parameter")
            #expect(try await client.execute(uri: "\(path)?w=64&q=60", method: .get).status == .ok, "a listed quality")
            #expect(try await client.execute(uri: "\(path)?w=64&q=61", method: .get).errorReason == "option-not-allowed")
        }

        let only = try await ServiceHarness.start {
            $0.presets = presets
            $0.onlyPresets = true
        }
        try await withService(only) { client, _ in
            let path = "/api/v1/elements/26/thumbnail"
            for query in ["", "?v=1", "?preset=thumb", "?pr=card"] {
                #expect(try await client.execute(uri: path + query, method: .get).status == .ok, "\(query)")
            }
            // Every option, alone and beside a preset.
            let options = ["w=64", "h=64", "fit=cover", "dpr=2", "q=60", "format=png", "enlarge=1"]
            for option in options {
                for query in ["?\(option)", "?preset=thumb&\(option)"] {
                    let response = try await client.execute(uri: path + query, method: .get)
                    #expect(response.status == .badRequest && response.errorReason == "option-not-allowed", "\(query)")
                }
            }
        }
    }

    @Test("with --signing-key, preset is signed like an option: no signature or one over other options is 403")
    func signedPresets() async throws {
        let signer = try URLSigner(keyHex: "00112233445566778899aabbccddeeff", saltHex: "")
        let harness = try await ServiceHarness.start {
            $0.signer = signer
            $0.presets = try! ServiceConfiguration.presets(parsing: "thumb:w=64&format=webp,card:w=256")
        }
        try await withService(harness) { client, _ in
            let path = "/api/v1/elements/26/thumbnail"
            let unsigned = try await client.execute(uri: "\(path)?preset=thumb", method: .get)
            #expect(unsigned.errorReason == "missing-signature")
            let none = signer.signature(path: path, options: [])
            #expect(try await client.execute(uri: "\(path)?preset=thumb&sig=\(none)", method: .get).errorReason == "bad-signature")
            let card = signer.signature(path: path, options: [("preset", "card")])
            #expect(try await client.execute(uri: "\(path)?preset=thumb&sig=\(card)", method: .get).errorReason == "bad-signature")
            let thumb = signer.signature(path: path, options: [("preset", "thumb")])
            #expect(try await client.execute(uri: "\(path)?preset=thumb&sig=\(thumb)", method: .get).status == .ok)
        }
    }

    @Test("--presets is checked at start: each entry NAME:OPTIONS, a name once, options that are valid together")
    func presetParsing() throws {
        #expect(try ServiceConfiguration.presets(parsing: "a:w=1,b_2-c:format=png&q=5") == ["a": "w=1", "b_2-c": "format=png&q=5"])
        for (text, complaint) in [("thumb", "not NAME:OPTIONS"), ("bad name:w=1", "not NAME:OPTIONS"), ("a:x=1", "'x', not an option"),
                                  ("a:w=0", "w must be a whole number"), ("a:w=1,a:w=2", "given twice"), ("a:", "not NAME:OPTIONS"),
                                  ("a:preset=b", "'preset', not an option")] {
            #expect(performing: { try ServiceConfiguration.presets(parsing: text) },
                    throws: { ($0 as? ServiceConfigurationError)?.description.contains(complaint) == true })
        }
    }

    @Test("past the bound on variants being made and waiting, requests get 503 with Retry-After; the others are made")
    func processingBound() async throws {
        let harness = try await ServiceHarness.start {
            $0.pipeline.maxConcurrentProcessing = 1
            $0.pipeline.maxQueuedProcessing = 0
        }
        try await withService(harness, mode: .live) { client, _ in
            let base = "http://127.0.0.1:\(try #require(client.port))"
            let engine = ImageCore.TransferEngine()
            #expect(try await engine.perform(ImageCore.TransferRequest(url: base + "/api/v1/elements/79/image")).status == 200)
            // Eight distinct large variants (about 12 MP each, a tenth of a second or more to make) at once.
            let responses = try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for offset in 0..<8 {
                    group.addTask {
                        let response = try await engine.perform(ImageCore.TransferRequest(url: base + "/api/v1/elements/79/image?w=\(4000 + offset)&enlarge=1"))
                        return (response.status, response.headers["Retry-After"])
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(responses.allSatisfy { $0.0 == 200 || ($0.0 == 503 && $0.1 == "1") }, "\(responses)")
            #expect(responses.contains { $0.0 == 200 } && responses.contains { $0.0 == 503 }, "\(responses)")
        }
    }

    @Test("…/info describes the original: format, stored and upright size, EXIF orientation, bytes; options are a 400")
    func info() async throws {
        try await withService(try await .start()) { client, _ in
            let image = try await client.execute(uri: "/api/v1/elements/79/image", method: .get)
            let header = try ImageInspector().inspectHeader(image.bytes, subject: "gold")
            let info = try await client.execute(uri: "/api/v1/elements/79/image/info?v=2", method: .get).decoded(as: ImageInfo.self)
            #expect(info.format == "jpeg" && info.contentType == "image/jpeg")
            #expect(info.width == header.width && info.height == header.height)
            #expect(info.orientation == 1 && info.uprightWidth == header.width && info.uprightHeight == header.height)
            #expect(info.bytes == image.bytes.count && info.etag == image.headers[.eTag])
            let thumbnail = try await client.execute(uri: "/api/v1/elements/1/thumbnail/info", method: .get).decoded(as: ImageInfo.self)
            #expect(thumbnail.format == "jpeg")
            let withOptions = try await client.execute(uri: "/api/v1/elements/79/image/info?w=64", method: .get)
            #expect(withOptions.status == .badRequest && withOptions.errorReason == "unknown-parameter")
            #expect(try await client.execute(uri: "/api/v1/elements/90/image/info", method: .get).errorReason == "no-photo")
        }
    }
}

/// A client's model of `…/thumbnail/info` and `…/image/info` (openapi `ImageInfo`), not the service's own type.
private struct ImageInfo: Decodable {
    var format: String
    var contentType: String
    /// As stored.
    var width: Int
    var height: Int
    /// EXIF, 1 when none.
    var orientation: Int
    /// What a viewer shows, what thumbnails are made from.
    var uprightWidth: Int
    var uprightHeight: Int
    var bytes: Int
    var etag: String
}

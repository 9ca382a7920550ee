import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ImageCore
import Testing
import TestSupport
@testable import TileCacheService

/// `serve --client-hints` and `…/srcset`, with request headers as Chromium sends them.
@Suite("Service: client hints and srcset", .timeLimit(.minutes(5)), .heavy)
struct ClientHintsTests {
    /// What Chromium sends for an `<img sizes="150px" srcset="…">` on a page that asked for hints, at a DPR of 2.
    static let chromium: HTTPFields = [
        .accept: "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8",
        HTTPField.Name("Sec-CH-DPR")!: "2", HTTPField.Name("Sec-CH-Width")!: "300", HTTPField.Name("Sec-CH-Viewport-Width")!: "1280",
    ]

    @Test("the rule: hints fill in only what the URL leaves open, raised to an allowed width, never with a preset")
    func rule() {
        let hints = ClientHints(Self.chromium)
        #expect(hints.dpr == 2 && hints.width == 300 && hints.viewportWidth == 1280)
        func applied(_ query: String, _ rules: VariantRules = VariantRules(), _ hints: ClientHints = ClientHints(Self.chromium)) -> String {
            hints.applied(to: QueryItems(query), rules: rules).items.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
        }
        #expect(applied("") == "w=300")
        #expect(applied("format=webp") == "format=webp&w=300")
        #expect(applied("w=100") == "w=100&dpr=2.0")
        #expect(applied("w=100&dpr=1") == "w=100&dpr=1")  // the URL's own dpr stays
        #expect(applied("w=3000") == "w=3000&dpr=1.36")  // within the largest side, not a refusal
        #expect(applied("", VariantRules(allowedWidths: [128, 256, 512])) == "w=512")
        #expect(applied("w=128", VariantRules(allowedWidths: [128, 256, 512])) == "w=256")
        #expect(applied("", VariantRules(allowedWidths: [64, 128])) == "w=128")  // the largest, when above them all
        #expect(applied("preset=thumb", VariantRules(presets: ["thumb": QueryItems("w=64")])) == "preset=thumb")
        #expect(applied("", VariantRules(onlyPresets: true)) == "")
        // Only the viewport: the image at most as wide as the viewport, in device pixels.
        #expect(applied("", VariantRules(), ClientHints(dpr: 2, viewportWidth: 400)) == "w=800")
        // Malformed or out of range: no hint.
        #expect(ClientHints([HTTPField.Name("Sec-CH-DPR")!: "nine", HTTPField.Name("Sec-CH-Width")!: "-5"]).isEmpty)
        #expect(ClientHints([HTTPField.Name("DPR")!: "1.5"]).dpr == 1.5)  // the older name too
        // What the URL gives wrong is left for ImageOptions to refuse, never a trap here (review of issue 34).
        #expect(applied("dpr=inf", VariantRules(), ClientHints(viewportWidth: 400)) == "w=400")
        #expect(applied("w=9000000000000000000", VariantRules(allowedWidths: [64])) == "w=9000000000000000000")
        // imgproxy URLs: the DPR at least 1, in hundredths, within the largest side.
        let tiny = ClientHints(dpr: 1e-300, width: 100).applied(to: ImageProcessing())
        #expect(tiny.dpr == 1 && tiny.width == 100)
        let odd = ClientHints(dpr: 2.000001, width: 300).applied(to: ImageProcessing())
        #expect(odd.dpr == 2 && odd.width == 150)
    }

    @Test("with --client-hints: Chromium's hints size the answer, which varies by them and says Accept-CH; without, nothing changes")
    func hints() async throws {
        try await withService(try await .start { $0.clientHints = true }) { client, _ in
            let hinted = try await client.execute(uri: "/api/v1/elements/26/image", method: .get, headers: Self.chromium)
            #expect(hinted.status == .ok && hinted.headers[.contentType] == "image/webp")
            #expect(try ImageInspector().inspectHeader(hinted.bytes, subject: "hinted").width == 300)
            let vary = hinted.headers[.vary] ?? ""
            #expect(["Accept", "Sec-CH-DPR", "Sec-CH-Width", "Sec-CH-Viewport-Width"].allSatisfy(vary.contains), "\(vary)")
            #expect(hinted.headers[HTTPField.Name("Accept-CH")!] == ClientHints.accepted)
            var oneX = Self.chromium
            oneX[HTTPField.Name("Sec-CH-Width")!] = nil
            let css = try await client.execute(uri: "/api/v1/elements/26/image?w=100", method: .get, headers: oneX)
            #expect(try ImageInspector().inspectHeader(css.bytes, subject: "dpr").width == 200)
            let plain = try await client.execute(uri: "/api/v1/elements/26/image", method: .get)
            #expect(try ImageInspector().inspectHeader(plain.bytes, subject: "plain").width == 640)
            let page = try await client.execute(uri: "/", method: .get)
            #expect(page.headers[HTTPField.Name("Accept-CH")!] == ClientHints.accepted)
        }
        try await withService(try await .start()) { client, _ in
            let ignored = try await client.execute(uri: "/api/v1/elements/26/image", method: .get, headers: Self.chromium)
            let width = try ImageInspector().inspectHeader(ignored.bytes, subject: "off").width
            #expect(width == 640 && ignored.headers[.vary] == nil)
        }
    }

    @Test("hints never make an unsigned variant where URLs must be signed")
    func signing() async throws {
        let key = String(repeating: "ab", count: 32), salt = String(repeating: "cd", count: 16)
        try await withService(try await .start { $0.clientHints = true; $0.signer = try! URLSigner(keyHex: key, saltHex: salt) }) { client, _ in
            let unsigned = try await client.execute(uri: "/api/v1/elements/26/image", method: .get, headers: Self.chromium)
            let width = try ImageInspector().inspectHeader(unsigned.bytes, subject: "original").width
            #expect(unsigned.status == .ok && width == 640)
            // A sig that does not hold is no way in: 403, not a hinted variant.
            let forged = try await client.execute(uri: "/api/v1/elements/26/image?sig=x", method: .get, headers: Self.chromium)
            #expect(forged.status == .forbidden && forged.errorReason == "bad-signature")
            // A signed URL without options (the signature of the path alone) takes the hints.
            let signer = try URLSigner(keyHex: key, saltHex: salt)
            let signed = signer.signature(path: "/api/v1/elements/26/image", options: [])
            let hinted = try await client.execute(uri: "/api/v1/elements/26/image?sig=\(signed)", method: .get, headers: Self.chromium)
            #expect(hinted.status == .ok, "\(hinted.errorReason ?? "")")
            #expect(try ImageInspector().inspectHeader(hinted.bytes, subject: "hinted").width == 300)
        }
    }

    @Test("…/srcset: candidate URLs that answer the sizes they claim, signed when signing is on, bounded widths, the placeholder")
    func srcset() async throws {
        struct Answer: Decodable {
            struct Candidate: Decodable { var url: String, width: Int, height: Int }
            struct Placeholder: Decodable { var blurhash: String, lqip: String }
            var src: String, srcset: String, width: Int, height: Int, candidates: [Candidate], placeholder: Placeholder
        }
        let key = String(repeating: "ab", count: 32), salt = String(repeating: "cd", count: 16)
        try await withService(try await .start { $0.signer = try! URLSigner(keyHex: key, saltHex: salt) }) { client, _ in
            let answer = try await client.execute(uri: "/api/v1/elements/26/image/srcset?widths=128,256,1024&format=webp", method: .get)
                .decoded(as: Answer.self)
            #expect(answer.width == 640 && answer.candidates.map(\.width) == [128, 256])  // 1024 is above the photo's 640
            #expect(answer.srcset == answer.candidates.map { "\($0.url) \($0.width)w" }.joined(separator: ", "))
            #expect(answer.src == answer.candidates.last?.url && answer.placeholder.lqip.hasPrefix("data:image/webp"))
            for candidate in answer.candidates {
                #expect(candidate.url.contains("sig="))
                let image = try await client.execute(uri: candidate.url, method: .get)
                #expect(image.status == .ok, "\(candidate.url): \(image.errorReason ?? "")")
                let header = try ImageInspector().inspectHeader(image.bytes, subject: candidate.url)
                #expect(header.format == .webp && header.width == candidate.width && header.height == candidate.height)
            }
            // Signing is on: only the widths the service offers (a signing oracle for any width would void signing).
            let refused = try await client.execute(uri: "/api/v1/elements/26/image/srcset?widths=300", method: .get)
            #expect(refused.status == .badRequest && refused.errorReason == "width-not-allowed")
            let bad = try await client.execute(uri: "/api/v1/elements/26/image/srcset?widths=abc", method: .get)
            #expect(bad.status == .badRequest)
            let missing = try await client.execute(uri: "/api/v1/elements/92/image/srcset", method: .get)
            #expect(missing.status == .notFound)
        }
        // Widths all above a small image: the smallest listed, which answers at the image's size; a preset's size is the
        // processor's (a cover crop is the box); --only-presets takes presets only.
        try await withService(try await .start {
            $0.allowedWidths = [4000, 4096]
            $0.presets = ["square": "w=64&h=64&fit=cover"]
        }) { client, _ in
            let answer = try await client.execute(uri: "/api/v1/elements/26/image/srcset", method: .get).decoded(as: Answer.self)
            let only = try #require(answer.candidates.first)
            #expect(answer.candidates.count == 1 && only.url.contains("w=4000") && only.width == 640 && only.height == 396)
            let image = try await client.execute(uri: only.url, method: .get)
            let fallbackWidth = try ImageInspector().inspectHeader(image.bytes, subject: "fallback").width
            #expect(image.status == .ok && fallbackWidth == 640)
            let square = try await client.execute(uri: "/api/v1/elements/26/image/srcset?preset=square", method: .get).decoded(as: Answer.self)
            #expect(square.candidates.map { [$0.width, $0.height] } == [[64, 64]])
        }
        try await withService(try await .start { $0.onlyPresets = true; $0.presets = ["thumb": "w=64"] }) { client, _ in
            let refused = try await client.execute(uri: "/api/v1/elements/26/image/srcset", method: .get)
            #expect(refused.status == .badRequest && refused.errorReason == "option-not-allowed")
        }
    }
}

import Foundation
import HTTPTypes
import ImageCore
import Testing
@testable import TileCacheService

/// imgproxy's URL format read as imgproxy reads it (options/parser, handlers/path.go, security/signature.go), without a
/// server: signatures against imgproxy's documented example, the option grammar, the two source forms, refusals.
@Suite("imgproxy URLs: signature, options, sources")
struct ImgproxyPathTests {
    /// imgproxy's documentation's signing example (docs "Signing a URL"): key `secret`, salt `hello`, in hex.
    static let documented = (key: "736563726574", salt: "68656C6C6F",
                             path: "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png",
                             signature: "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8")

    func read(_ path: String, accept: String? = nil, autoWebP: Bool = false, autoAVIF: Bool = false, now: Date = Date()) throws -> ImgproxyPath {
        let (info, signature, signed) = try #require(ImgproxyPath.split(path))
        return try ImgproxyPath(signature: signature, signedPath: signed, info: info, accept: accept,
                                negotiation: FormatNegotiation(avif: autoAVIF, webp: autoWebP), now: now)
    }

    @Test("the signature of imgproxy's documented example, its truncation, and a wrong one refused")
    func signature() throws {
        var signer = try URLSigner(keyHex: Self.documented.key, saltHex: Self.documented.salt)
        #expect(signer.pathSignature(Self.documented.path) == Self.documented.signature)
        try signer.verify(pathSignature: Substring(Self.documented.signature), signedPath: Self.documented.path)
        let split = try #require(ImgproxyPath.split("/\(Self.documented.signature)\(Self.documented.path)"))
        #expect(split.signature == Self.documented.signature && split.signedPath == Self.documented.path && !split.info)
        for wrong in ["pKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8", "insecure", "_", "", "oKfUtW34"] {
            #expect(throws: ServiceError.self) { try signer.verify(pathSignature: Substring(wrong), signedPath: Self.documented.path) }
        }
        #expect(throws: ServiceError.self) { try signer.verify(pathSignature: Substring(Self.documented.signature), signedPath: Self.documented.path + "x") }
        signer.pathSignatureSize = 8  // IMGPROXY_SIGNATURE_SIZE=8: the first 8 bytes, base64url
        #expect(signer.pathSignature(Self.documented.path) == "oKfUtW34Dvo")
        try signer.verify(pathSignature: "oKfUtW34Dvo", signedPath: Self.documented.path)
        #expect(throws: ServiceError.self) { try signer.verify(pathSignature: Substring(Self.documented.signature), signedPath: Self.documented.path) }
    }

    @Test("base64 sources split by /, plain sources percent-encoded, extensions, info")
    func sources() throws {
        let b64 = try read("/x/rs:fill:300:400:0/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png")
        #expect(b64.source == "http://example.com/images/curiosity.jpg" && b64.processing.format == .png)
        #expect(b64.processing.width == 300 && b64.processing.height == 400 && b64.processing.fit == .coverClipped && !b64.processing.enlarge)
        let plain = try read("/x/w:64/plain/http%3A%2F%2Fexample.com%2Fa%20b.jpg%3Fv%3D1@webp")
        #expect(plain.source == "http://example.com/a b.jpg?v=1" && plain.processing.format == .webp && plain.processing.width == 64)
        let raw = try read("/x/plain/https://example.com/a/b.jpg")
        #expect(raw.source == "https://example.com/a/b.jpg" && raw.processing.isNone)
        // A proxy that squeezed `//` to `/` (imgproxy's re-denormalisation), and `%3A` in the options.
        let squeezed = try read("/x/rs%3Afit%3A10%3A10/plain/https:/example.com/a.jpg")
        #expect(squeezed.source == "https://example.com/a.jpg" && squeezed.signedPath == "/rs:fit:10:10/plain/https://example.com/a.jpg")
        let info = try read("/info/x/plain/https://example.com/a.jpg")
        #expect(info.info && info.source == "https://example.com/a.jpg")
        #expect(ImgproxyPath.split("/onlyone") == nil && ImgproxyPath.split("/") == nil && ImgproxyPath.split("/sig/") == nil)
    }

    @Test("options: full and short names, later ones win, defaults, dpr, gravity, quality and format")
    func options() throws {
        let long = try read("/x/resizing_type:fill-down/width:100/height:50/enlarge:1/gravity:noea:5:0.1/quality:70/format:jpg/plain/http://e.com/a")
        let short = try read("/x/rt:fill-down/w:100/h:50/el:t/g:noea:5:0.1/q:70/f:jpeg/plain/http://e.com/a")
        #expect(long.processing == short.processing)
        #expect(long.processing == ImageProcessing(width: 100, height: 50, fit: .cover, enlarge: true, quality: 70, format: .jpeg,
                                                   gravity: .init(.northEast, x: 5, y: 0.1)))
        #expect(try read("/x/s:10:20/s:30/plain/http://e.com/a").processing.width == 30)
        #expect(try read("/x/rs:force:10:20/plain/http://e.com/a").processing.fit == .fill)
        #expect(try read("/x/rs:auto:10:20/plain/http://e.com/a").processing.fit == .auto)
        #expect(try read("/x/rs:fit:10:20/plain/http://e.com/a").processing.fit == .inside)
        let dpr = try read("/x/rs:fill:100:50/dpr:2/g:so:3:0/plain/http://e.com/a").processing
        #expect(dpr.width == 100 && dpr.height == 50 && dpr.dpr == 2 && dpr.gravity == .init(.south, x: 3, y: 0))
        #expect(try read("/x/q:0/w:10/plain/http://e.com/a").processing.quality == nil)  // 0: the default
        #expect(try read("/x/rs:fill:10:10/g:fp:0.25:0.75/plain/http://e.com/a").processing.gravity == .init(.focusPoint, x: 0.25, y: 0.75))
        #expect(try read("/x/rs:fill:10:10/g:sm/plain/http://e.com/a").processing.gravity == .init(.smart))
        // min-width, min-height, crop, extend (alone and as size's fourth argument) and background.
        let more = try read("/x/mw:100/mh:50/c:0.5:200:nowe/s:300:200:1:1:so:5:0/bg:255:0:10/plain/http://e.com/a").processing
        #expect(more.minWidth == 100 && more.minHeight == 50 && more.enlarge && more.width == 300)
        #expect(more.regionCrop == .init(width: 0.5, height: 200, gravity: .init(.northWest)))
        #expect(more.extend == .init(.south, x: 5, y: 0) && more.background == .init(red: 255, green: 0, blue: 10))
        #expect(try read("/x/ex:1/plain/http://e.com/a").processing.extend == .centre)
        #expect(try read("/x/ex:0/plain/http://e.com/a").processing.extend == nil)
        #expect(try read("/x/bg:f80/plain/http://e.com/a").processing.background == .init(red: 255, green: 136, blue: 0))
        #expect(try read("/x/bg:ff8800/bg:/plain/http://e.com/a").processing.background == nil)
        #expect(try read("/x/c:0:0/plain/http://e.com/a").processing.regionCrop == nil)
        #expect(try read("/x/c:10:10:sm/plain/http://e.com/a").processing.regionCrop == .init(width: 10, height: 10, gravity: .init(.smart)))
        // Accepted and not part of the image: cache busters, metadata stripping (never kept), a future expiry.
        #expect(try read("/x/cb:abc/sm:1/exp:4102444800/w:10/plain/http://e.com/a").processing == ImageProcessing(width: 10))
        // A cache buster makes the answer immutable (the URL changes with the source); an empty one is none.
        #expect(try read("/x/cb:abc/w:10/plain/http://e.com/a").immutable)
        #expect(try !read("/x/cb:/w:10/plain/http://e.com/a").immutable && !read("/x/w:10/plain/http://e.com/a").immutable)
        // No format named: the source's (JPEG or PNG); with auto WebP, what Accept names.
        #expect(try read("/x/w:10/plain/http://e.com/a", accept: "image/webp").processing.format == nil)
        let negotiated = try read("/x/w:10/plain/http://e.com/a", accept: "image/avif,image/webp,*/*", autoWebP: true)
        #expect(negotiated.processing.format == .webp && negotiated.negotiated)
        #expect(try read("/x/w:10/plain/http://e.com/a@png", accept: "image/webp", autoWebP: true).negotiated == false)
        // With auto AVIF too, AVIF first; a client that names only WebP (or only */*) gets WebP (or the default).
        let chromium = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
        #expect(try read("/x/w:10/plain/http://e.com/a", accept: chromium, autoWebP: true, autoAVIF: true).processing.format == .avif)
        #expect(try read("/x/w:10/plain/http://e.com/a", accept: "image/webp,*/*", autoWebP: true, autoAVIF: true).processing.format == .webp)
        #expect(try read("/x/w:10/plain/http://e.com/a", accept: "image/avif;q=0,*/*", autoAVIF: true).processing.format == nil)
        #expect(try read("/x/w:10/plain/http://e.com/a", accept: chromium, autoAVIF: true).negotiated)
        #expect(try read("/x/w:10/f:avif/plain/http://e.com/a").processing.format == .avif)
        #expect(try read("/x/w:10/plain/http://e.com/a@avif").processing.format == .avif)
        // The service's presets, written as queries, applied by pr:NAME; options after it win.
        let presets = ImgproxyPath.presets(["thumb": QueryItems("w=128&h=128&fit=cover&format=webp"), "big": QueryItems("w=1024&enlarge=1")])
        let (info, signature, signed) = try #require(ImgproxyPath.split("/x/pr:thumb/q:60/plain/http://e.com/a"))
        let preset = try ImgproxyPath(signature: signature, signedPath: signed, info: info, accept: nil, presets: presets)
        #expect(preset.processing == ImageProcessing(width: 128, height: 128, fit: .cover, quality: 60, format: .webp))
    }

    @Test("f:blurhash, @thumbhash and f:placeholder ask for the placeholder of the variant the other options make")
    func placeholders() throws {
        let blurhash = try read("/x/rs:fill:64:64/f:blurhash/plain/http://e.com/a.jpg")
        #expect(blurhash.placeholder == .blurhash && blurhash.processing.makesPlaceholder && !blurhash.negotiated)
        #expect(blurhash.processing.width == 64 && blurhash.processing.fit == .coverClipped)
        let thumbhash = try read("/x/plain/http://e.com/a.jpg@thumbhash", accept: "image/webp")
        #expect(thumbhash.placeholder == .thumbhash && thumbhash.processing == .placeholder(of: .none))
        // A later format wins, as imgproxy's later options do.
        let image = try read("/x/f:placeholder/f:webp/plain/http://e.com/a.jpg")
        #expect(image.placeholder == nil && image.processing.format == .webp)
    }

    @Test("what imgproxy refuses, and what TileCache does not do yet, is 404 invalid-url naming it; an expired URL too")
    func refusals() throws {
        let cases: [(String, String)] = [
            ("/x/nope:1/plain/http://e.com/a", "Unknown processing option nope"),
            ("/x/w:-1/plain/http://e.com/a", "Invalid width"),
            ("/x/w:1:2/plain/http://e.com/a", "Invalid w arguments"),
            ("/x/rt:stretch/plain/http://e.com/a", "Invalid resizing_type"),
            ("/x/q:101/plain/http://e.com/a", "Invalid quality"),
            ("/x/g:up/plain/http://e.com/a", "Invalid gravity"),
            ("/x/g:fp:1.5:0/plain/http://e.com/a", "Invalid gravity x offset"),
            ("/x/g:fp:0.5/plain/http://e.com/a", "Invalid gravity arguments"),
            ("/x/f:bmpx/plain/http://e.com/a", "Invalid format"),
            ("/x/f:gif/plain/http://e.com/a", "gif format is not supported by TileCache yet"),
            ("/x/bg:ffff/plain/http://e.com/a", "Invalid background argument"),
            ("/x/bg:1:2/plain/http://e.com/a", "Invalid background arguments"),
            ("/x/bg:1:2:300/plain/http://e.com/a", "Invalid background.B"),
            ("/x/ex:1:sm/plain/http://e.com/a", "Invalid extend gravity"),
            ("/x/c:-1/plain/http://e.com/a", "Invalid crop width"),
            ("/x/mw:x/plain/http://e.com/a", "Invalid min-width"),
            ("/x/fl:1/plain/http://e.com/a", "the fl option is not supported"),
            ("/x/g:sm:1:1/plain/http://e.com/a", "Invalid gravity arguments"),
            ("/x/exp:1000/plain/http://e.com/a", "Expired URL"),
            ("/x/exp:soon/plain/http://e.com/a", "Invalid expires"),
            ("/x/pr:nothing/plain/http://e.com/a", "Unknown preset"),
            ("/x/w:10/plain/http://e.com/a@png@jpg", "Multiple formats"),
            ("/x/w:10/aGVsbG8.png.jpg", "Multiple formats"),
            ("/x/w:10/plain/", "Image URL is empty"),
            ("/x/w:10/!!!!.png", "Invalid url encoding"),
        ]
        for (path, expected) in cases {
            do {
                _ = try read(path)
                Issue.record("\(path) was accepted")
            } catch let error as ServiceError {
                #expect(error.status == .notFound && error.reason == .invalidURL && error.message.contains(expected), "\(path): \(error)")
            }
        }
        let big = #expect(throws: ServiceError.self) { try read("/x/rs:fit:4000:4000/dpr:2/plain/http://e.com/a") }
        #expect(big?.reason == .outputTooLarge)
        // Numbers that would overflow the geometry's integers are refused when read (a review found dpr:1e20 with
        // el:1, and g:no:1e300, trapping the process once any image loaded).
        for path in ["/x/el:1/dpr:1e20/plain/http://e.com/a", "/x/dpr:9/plain/http://e.com/a", "/x/rs:fill:10:10/g:no:1e300/plain/http://e.com/a",
                     "/x/g:ea:4097:0/plain/http://e.com/a"] {
            let error = #expect(throws: ServiceError.self) { try read(path) }
            #expect(error?.reason == .invalidURL, "\(path)")
        }
        #expect(try read("/x/dpr:8/g:ea:4096:0/plain/http://e.com/a").processing.dpr == 8)
    }

    @Test("allowed sources: imgproxy's prefix patterns, * within one part, never across /, ?, # or @")
    func allowedSources() throws {
        let sources = try AllowedSources(["https://images.example.com/", "https://*.cdn.example.com/photos/", "http://127.0.0.1:*/"])
        for allowed in ["https://images.example.com/a.jpg", "HTTPS://Images.Example.com/a.jpg", "https://eu.cdn.example.com/photos/x.png",
                        "http://127.0.0.1:8081/periodictable/Tiles/001/s7.JPG"] {
            #expect(sources.allows(allowed), "\(allowed)")
        }
        for refused in ["https://images.example.com.evil.test/a.jpg", "http://images.example.com/a.jpg", "https://evil.test/https://images.example.com/",
                        "https://a.b.evil.test/x.cdn.example.com/photos/", "https://evil.test?.cdn.example.com/photos/",
                        "https://evil.test#.cdn.example.com/photos/", "https://u@x.cdn.example.com/photos/a", "https://eu.cdn.example.com/other/x.png",
                        "ftp://images.example.com/a.jpg", "http://127.0.0.2:80/"] {
            #expect(!sources.allows(refused), "\(refused)")
        }
        #expect(try AllowedSources(["*"]).allows("http://anything.test/a") && !(try AllowedSources(["*"]).allows("file:///etc/passwd")))
        #expect(AllowedSources.none.isEmpty && !AllowedSources.none.allows("https://images.example.com/a.jpg"))
        // A NUL would end the URL libcurl is given: never matched by *, and refused by the transfer too.
        #expect(!sources.allows("https://attacker.test\u{0}.cdn.example.com/photos/a.jpg"))
        #expect(throws: ImageCoreError.self) { try RequestURL("https://attacker.test\u{0}.example.com/x.jpg") }
        // Many stars against a long text that never matches: pattern x text steps, not a backtracking blowup.
        let stars = try AllowedSources(["https://*.*.*.*.*.*.*.*.example.com/"])
        #expect(!stars.allows("https://" + String(repeating: "a.", count: 20_000) + "example.org/x"))
        #expect(stars.allows("https://a.b.c.d.e.f.g.h.example.com/x"))
        #expect(throws: AllowedSourcesError.self) { try AllowedSources(["images.example.com"]) }
        #expect(throws: AllowedSourcesError.self) { try AllowedSources(["file:///"]) }
    }

    @Test("geometry of imgproxy's resizing types and gravity, worked by hand from its calcScale, calcSizes and calcPosition")
    func geometry() {
        func geometry(_ processing: ImageProcessing, _ width: Int, _ height: Int) -> ProcessingGeometry {
            ProcessingGeometry(processing, sourceWidth: width, sourceHeight: height)
        }
        // fill on a source too small to cover the box, no enlarge: the box is cut to the source (imgproxy: 200x150);
        // fill-down keeps the box's ratio instead (150x150).
        let fill = geometry(ImageProcessing(width: 300, height: 300, fit: .coverClipped), 200, 150)
        #expect(fill.width == 200 && fill.height == 150 && fill.cropWidth == 200 && fill.cropHeight == 150)
        let fillDown = geometry(ImageProcessing(width: 300, height: 300, fit: .cover), 200, 150)
        #expect(fillDown.width == 150 && fillDown.height == 150)
        // A 640x396 photo filled into 100x100: scaled to 162x100, the 100x100 crop placed in it as calcPosition places it
        // (whole scaled pixels, halves to even), then read back in source pixels.
        func left(_ gravity: ImageProcessing.Gravity, fit: ImageProcessing.Fit = .coverClipped) -> Int {
            let placed = geometry(ImageProcessing(width: 100, height: 100, fit: fit, gravity: gravity), 640, 396)
            #expect(placed.width == 100 && placed.height == 100 && placed.cropY == 0 && abs(placed.cropWidth - 100 * 640 / 162) < 1e-9)
            return Int((placed.cropX * 162 / 640).rounded())
        }
        #expect(left(.centre) == 32)  // (162 - 100 + 1) / 2 = 31.5, to even
        #expect(left(.init(.northWest)) == 0 && left(.init(.southEast)) == 62 && left(.init(.south)) == 32)
        #expect(left(.init(.east, x: 0.1)) == 46)  // 16.2 scaled pixels from the east edge, to even: 16
        #expect(left(.init(.west, x: 10), fit: .cover) == 10)
        #expect(left(.init(.focusPoint, x: 0.25, y: 0.5)) == 0 && left(.init(.focusPoint, x: 0.75, y: 0.5)) == 62)
        // auto: a landscape source in a portrait box fits; in a landscape or square box it fills.
        let portrait = geometry(ImageProcessing(width: 100, height: 200, fit: .auto), 640, 396)
        #expect(portrait.width == 100 && portrait.height == 62)
        let square = geometry(ImageProcessing(width: 100, height: 100, fit: .auto), 640, 396)
        #expect(square.width == 100 && square.height == 100 && abs(square.cropWidth - 100 * 640 / 162) < 1e-9)
        // force without enlarge keeps the box's shape, shrunk until nothing is enlarged (126x126 into 64x200: 40x126);
        // with one side it stretches that side only.
        let force = geometry(ImageProcessing(width: 64, height: 200, fit: .fill), 126, 126)
        #expect(force.width == 40 && force.height == 126)
        let forceOneSide = geometry(ImageProcessing(width: 64, fit: .fill), 126, 100)
        #expect(forceOneSide.width == 64 && forceOneSide.height == 100)
        // dpr without enlarge: lowered so the box keeps its shape (64x200 at dpr 2 from 126x126: 64x126, not 126x126).
        let dpr = geometry(ImageProcessing(width: 64, height: 200, fit: .coverClipped, dpr: 2), 126, 126)
        #expect(dpr.width == 64 && dpr.height == 126)
        // Extremes that no parser lets through still give a geometry, never a trap.
        let extreme = geometry(ImageProcessing(width: 1, height: 1, fit: .coverClipped, enlarge: true, gravity: .init(.east, x: 1e300), dpr: 1e20), 1, 100_000)
        #expect(extreme.width >= 1 && extreme.height >= 1)
        var thumbor = ImageProcessing(width: 1000, height: 1, fit: .cover, enlarge: true)
        thumbor.cropRule = .thumbor
        #expect(geometry(thumbor, 1, 100_000).cropHeight >= 1)
    }
}

import Catalogue
import Foundation
@testable import ImageCore
import NIOCore
import Testing
import TestSupport
import TileCacheOrigin

/// BlurHash, ThumbHash and the rest of `ImagePlaceholder`: the reference encoders' strings for the same pixels, the
/// cases the references get wrong (tiny images), and the placeholder kept in the tiers as a variant.
/// `scripts/placeholder_check.py` (in `make test`) runs the references themselves on other projects' images.
@Suite("Placeholders", .timeLimit(.minutes(5)))
struct PlaceholderTests {
    /// 23x17 pixels no one could mistake for a symmetric pattern; alpha varies when asked.
    static func pixels(alpha: Bool) -> [UInt8] {
        var pixels: [UInt8] = []
        for y in 0..<17 {
            for x in 0..<23 {
                let a: UInt8 = alpha ? UInt8((x * 13 + y * 7) % 256) : 255
                pixels += [UInt8((x * 37 + y * 11) % 256), UInt8((x * x + y * 5) % 256), UInt8((x * y) % 256), a]
            }
        }
        return pixels
    }

    @Test("BlurHash of known pixels is the string the PyPI reference (blurhash 1.1.5) gives for them")
    func blurHashMatchesReference() {
        let rgba = Self.pixels(alpha: false)
        let rgb = stride(from: 0, to: rgba.count, by: 4).flatMap { rgba[$0..<($0 + 3)] }
        // blurhash.encode(rows, 4, 3) on the same pixels.
        #expect(BlurHash.encode(rgb: rgb, width: 23, height: 17, componentsX: 4, componentsY: 3) == "LPHBbjukQpwQn]RFOtS[f2WboYR:")
    }

    @Test("ThumbHash of known pixels, opaque and with alpha, is the reference's Rust encoder's (thumbhash-rs 0.1.0)")
    func thumbHashMatchesReference() {
        let opaque = Data(ThumbHash.encode(rgba: Self.pixels(alpha: false), width: 23, height: 17)).base64EncodedString()
        let alpha = Data(ThumbHash.encode(rgba: Self.pixels(alpha: true), width: 23, height: 17)).base64EncodedString()
        #expect(opaque == "WSkKLYwwl2dyeGeWd3iHh41P+4yJ")
        #expect(alpha == "mgmGFIYnIveRm6V4p/e1/XmJYHlli5d3Bw==")
    }

    @Test("components follow the aspect ratio: 4 along the longer side")
    func components() {
        #expect(BlurHash.components(width: 300, height: 200) == (4, 3))
        #expect(BlurHash.components(width: 200, height: 300) == (3, 4))
        #expect(BlurHash.components(width: 100, height: 100) == (4, 4))
        #expect(BlurHash.components(width: 1000, height: 10) == (4, 1))
    }

    @Test("a 1x1 image is a flat placeholder of its colour: no aliasing pattern, as the references would draw")
    func tinyImage() throws {
        let white = DecodedImage(width: 1, height: 1, pixelFormat: .rgb, pixels: [250, 250, 250])
        let placeholder = try ImagePlaceholder(of: white, subject: "white")
        #expect(placeholder.averageColor == "#fafafa" && placeholder.dominantColor == "#fafafa" && placeholder.averageAlpha == 1)
        // Enlarged to 8x8 first: the string the reference gives for 8x8 pixels of (250, 250, 250), with 4x4
        // components (blurhash.encode in blurhash 1.1.5). Of the 1x1 image itself it gives an AC pattern that its
        // decoder draws as light and dark bands.
        #expect(placeholder.blurhash == "UdS$ov~qfQ~q~qt7fQt7fQfQfQfQ~qt7fQt7")
        #expect(placeholder.lqip.hasPrefix("data:image/webp;base64,") && placeholder.lqip.count < 600)
    }

    @Test("colours: the average weighs alpha; the dominant is the fullest cell's mean; a transparent image has no dominant but its average")
    func colours() throws {
        // Three quarters red, one quarter blue; the blue half transparent.
        var pixels: [UInt8] = []
        for index in 0..<64 { pixels += index < 48 ? [255, 0, 0, 255] : [0, 0, 255, 128] }
        let image = DecodedImage(width: 8, height: 8, pixelFormat: .rgba, pixels: pixels)
        let placeholder = try ImagePlaceholder(of: image, subject: "red and blue")
        #expect(placeholder.dominantColor == "#ff0000")
        // red: 48 * 255 * 255 / (48 * 255 + 16 * 128) = 218.4; blue: 16 * 255 * 128 / 14288 = 36.6
        #expect(placeholder.averageColor == "#da0025", "\(placeholder.averageColor)")
        #expect(abs(placeholder.averageAlpha - 0.875) < 0.002)
        let clear = DecodedImage(width: 2, height: 2, pixelFormat: .rgba, pixels: [UInt8](repeating: 0, count: 16))
        let nothing = try ImagePlaceholder(of: clear, subject: "clear")
        #expect(nothing.averageAlpha == 0 && nothing.dominantColor == nothing.averageColor)
    }

    @Test("the placeholder is a variant: made once, kept on disk, read back by a new pipeline without a download; its JSON reads back")
    func keptInTheTiers() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                var configuration = ImagePipeline.Configuration()
                configuration.diskDirectory = directory
                configuration.downloader = .testing()
                let url = origin.urlBuilder.url(for: try #require(ElementCatalogue.standard.elements.first { $0.symbol == "Fe" }), kind: .full)
                let request = ImageRequest(url: url, processing: .placeholder(of: .none))
                let first = try await ImagePipeline(configuration: configuration).image(for: request)
                #expect(first.processed && first.header.format == .placeholder && first.contentType == "application/json")
                let made = try #require(first.bytes.flatMap { ImagePlaceholder(json: Array($0.readableBytesView)) })
                #expect(made.blurhash.count >= 6 && made.blurhash.count % 2 == 0 && !made.thumbhash.isEmpty)
                #expect(first.validators.etag.hasSuffix("w32h32placeholder\""), "\(first.validators.etag)")
                let again = try await ImagePipeline(configuration: configuration).image(for: request)
                #expect(again.outcome == .diskHit && !again.processed && again.bytesDownloaded == 0)
                #expect(again.bytes.map { Array($0.readableBytesView) } == first.bytes.map { Array($0.readableBytesView) })
                // A decoded memory tier (the CLI's) keeps the placeholder's bytes: a memory hit answers them.
                let pipeline = ImagePipeline(configuration: configuration)
                _ = try await pipeline.image(for: request)
                let hit = try await pipeline.image(for: request)
                #expect(hit.outcome == .memoryHit && hit.bytes != nil)
            }
        }
    }
}

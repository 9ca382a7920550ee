import Foundation
import HTTPTypes
import ImageCore
import Logging
import Testing
@testable import TileCacheService

/// thumbor's URL format read as thumbor reads it (libthumbor's regex, thumbor's transformer), without a server.
@Suite("thumbor URLs: signature, grammar, filters")
struct ThumborPathTests {
    @Test("the signature of thumbor's documented example (libthumbor's test vector); unsafe only when allowed")
    func signature() throws {
        let key = Array("my-security-key".utf8)
        let path: Substring = "300x200/smart/s.glbimg.com/et/bb/f/original/2011/03/24/VN0JiwzmOw0b0lg.jpg"
        #expect(ThumborPath.signature(path, key: key) == "pmpqu7scjqUn0qoO4FsfSg3oTTM=")
        #expect(ThumborPath.looksLikeThumbor("/pmpqu7scjqUn0qoO4FsfSg3oTTM=/\(path)") && ThumborPath.looksLikeThumbor("/unsafe/a.jpg"))
        #expect(!ThumborPath.looksLikeThumbor("/oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8/rs:fill:1:1/plain/a"))
        let signed = try ThumborPath("/pmpqu7scjqUn0qoO4FsfSg3oTTM=/300x200/s.glbimg.com/a.jpg")
        #expect(throws: ServiceError.self) { try signed.verify(key: key, allowsUnsafe: true) }  // signed over another path
        let good = try ThumborPath("/\(ThumborPath.signature("300x200/s.glbimg.com/a.jpg", key: key))/300x200/s.glbimg.com/a.jpg")
        try good.verify(key: key, allowsUnsafe: false)
        #expect(throws: ServiceError.self) { try good.verify(key: Array("other".utf8), allowsUnsafe: false) }
        let unsafe = try ThumborPath("/unsafe/300x200/s.glbimg.com/a.jpg")
        try unsafe.verify(key: nil, allowsUnsafe: true)
        let refused = #expect(throws: ServiceError.self) { try unsafe.verify(key: key, allowsUnsafe: false) }
        #expect(refused?.status == .badRequest && refused?.message.contains("unsafe is not allowed") == true)
    }

    @Test("sizes, fit-in, alignment, filters and sources as thumbor reads them")
    func grammar() throws {
        let crop = try ThumborPath("/unsafe/300x200/left/top/filters:quality(70):format(webp):strip_icc()/example.com/a.jpg")
        #expect(crop.source == "http://example.com/a.jpg")
        /// thumbor's URLs crop by thumbor's rules.
        func thumbor(_ processing: ImageProcessing) -> ImageProcessing {
            var processing = processing
            processing.cropRule = .thumbor
            return processing
        }
        #expect(crop.processing == thumbor(ImageProcessing(width: 300, height: 200, fit: .cover, enlarge: true, quality: 70, format: .webp,
                                                           gravity: .init(.northWest))))
        let fit = try ThumborPath("/unsafe/fit-in/300x0/https://example.com/a%20b.jpg")
        #expect(fit.source == "https://example.com/a b.jpg" && fit.processing == thumbor(ImageProcessing(width: 300, fit: .inside)))
        let capped = try ThumborPath("/unsafe/300x200/filters:no_upscale()/example.com/a.jpg")
        #expect(capped.processing.boxCappedToSource && capped.processing.enlarge)
        #expect(try ThumborPath("/unsafe/example.com/a.jpg").processing == thumbor(ImageProcessing(fit: .cover, enlarge: true)))
        #expect(try ThumborPath("/unsafe/x200/example.com/a.jpg").processing.height == 200)
        #expect(try ThumborPath("/unsafe/right/example.com/a.jpg").processing.gravity == .init(.east))
        #expect(try ThumborPath("/unsafe/300x200/smart/example.com/a.jpg").processing.gravity == .init(.smart))
        #expect(try ThumborPath("/unsafe/300x200/left/smart/example.com/a.jpg").processing.gravity == .init(.smart))
        // Manual crops, fit-in's variants, flips, fill() and max_bytes(), as libthumbor writes them.
        let all = try ThumborPath("/unsafe/10x20:300x400/adaptive-full-fit-in/-200x-100/filters:fill(ff000080,true):max_bytes(5000)/a.com/a.jpg").processing
        #expect(all.sourceCrop == .init(left: 10, top: 20, right: 300, bottom: 400) && all.fitInFull && all.fitInAdaptive)
        #expect(all.flipHorizontal && all.flipVertical && all.width == 200 && all.height == 100 && all.maxBytes == 5000)
        #expect(all.canvas == .color(.init(red: 255, green: 0, blue: 0, alpha: 128)) && all.canvasUnderTransparency)
        #expect(try ThumborPath("/unsafe/0x0:0x0/-x100/a.com/a.jpg").processing.sourceCrop == nil)
        #expect(try ThumborPath("/unsafe/-x100/a.com/a.jpg").processing.flipHorizontal)
        #expect(try ThumborPath("/unsafe/trim/a.com/a.jpg").processing.trim == .init())
        // meta/: thumbor's JSON, numbers typed as thumbor's (URL sizes are floats, rounded ones ints), the source quoted.
        let meta = try ThumborPath("/unsafe/meta/fit-in/300x200/a.com:8080/a b.jpg")
        #expect(meta.meta && meta.rawSource == "a.com:8080/a b.jpg")
        #expect(meta.metaJSON(sourceWidth: 640, sourceHeight: 396) == #"{"thumbor": {"source": {"url": "a.com%3A8080/a%20b.jpg", "width": 300, "height": 186, "frameCount": 1}, "operations": [{"type": "resize", "width": 300.0, "height": 186}], "target": {"width": 300.0, "height": 186}, "focal_points": [{"x": 320, "y": 198, "z": 1.0, "height": 1, "width": 1, "origin": "alignment"}]}}"#)
        #expect(try ThumborPath("/unsafe/trim:bottom-right:20/100x0/a.com/a.jpg").processing.trim == .init(fromBottomRight: true, tolerance: 20))
        #expect(try ThumborPath("/unsafe/trim:5/a.com/a.jpg").processing.trim == .init(tolerance: 5))
        #expect(try ThumborPath("/unsafe/full-fit-in/100x100/a.com/a.jpg").processing.fitInAdaptive == false)
        #expect(try ThumborPath("/unsafe/fit-in/100x100/filters:fill(Red)/a.com/a.jpg").processing.canvas == .color(.init(red: 255, green: 0, blue: 0)))
        #expect(try ThumborPath("/unsafe/fit-in/100x100/filters:fill(fff)/a.com/a.jpg").processing.canvas == .color(.white))
        #expect(try ThumborPath("/unsafe/fit-in/100x100/filters:fill(transparent)/a.com/a.jpg").processing.canvas == .color(.transparent))
        #expect(try ThumborPath("/unsafe/fit-in/100x100/filters:fill(auto)/a.com/a.jpg").processing.canvas == .meanColor)
        #expect(try ThumborPath("/unsafe/fit-in/100x100/filters:fill(blur,true)/a.com/a.jpg").processing.canvas == .blurredImage)
    }

    @Test("what thumbor has and TileCache does not do yet is 400 invalid-url, named")
    func refusals() {
        for (path, expected) in [("/unsafe/meta/10x10/smart/a.com/a.jpg", "meta with smart"), ("/unsafe/meta/trim/a.com/a.jpg", "meta with trim"),
                                 ("/unsafe/debug/a.com/a.jpg", "debug"),
                                 ("/unsafe/origx10/a.com/a.jpg", "orig"),
                                 ("/unsafe/filters:fill(notacolour)/a.com/a.jpg", "not a colour"), ("/unsafe/filters:fill(+ff)/a.com/a.jpg", "not a colour"),
                                 ("/unsafe/filters:fill(+fff)/a.com/a.jpg", "not a colour"), ("/unsafe/filters:fill(red,maybe)/a.com/a.jpg", "True or False"),
                                 ("/unsafe/filters:max_bytes(0)/a.com/a.jpg", "max_bytes"), ("/unsafe/filters:blur(3)/a.com/a.jpg", "blur"),
                                 ("/unsafe/99999999x0:1x1/a.com/a.jpg", "beyond any image"),
                                 ("/unsafe/filters:format(gif)/a.com/a.jpg", "gif"), ("/unsafe/filters:quality(900)/a.com/a.jpg", "quality"),
                                 ("/unsafe/", "No original image"), ("/unsafe", "No original image")] {
            do {
                _ = try ThumborPath(path)
                Issue.record("\(path) was accepted")
            } catch {
                #expect(error.status == .badRequest && error.reason == .invalidURL && error.message.contains(expected), "\(path): \(error)")
            }
        }
    }

    @Test("no_upscale: each side of the box cut to the source's, then cropped and resized as thumbor does")
    func noUpscale() {
        var processing = ImageProcessing(width: 300, height: 200, fit: .cover, enlarge: true)
        processing.boxCappedToSource = true
        let capped = ProcessingGeometry(processing, sourceWidth: 126, sourceHeight: 126)
        #expect(capped.width == 126 && capped.height == 126)
        let enlarged = ProcessingGeometry(ImageProcessing(width: 300, height: 200, fit: .cover, enlarge: true), sourceWidth: 126, sourceHeight: 126)
        #expect(enlarged.width == 300 && enlarged.height == 200)
    }

    @Test("with a thumbor key and no imgproxy key, imgproxy URLs must be signed: they may not go around thumbor's")
    func imgproxyBesideAThumborKey() throws {
        var configuration = ImagePipeline.Configuration()
        configuration.diskDirectory = nil
        let pipeline = ImagePipeline(configuration: configuration)
        func controller(thumborKey: [UInt8]?) throws -> OpenSourcesController {
            OpenSourcesController(pipeline: pipeline, allowedSources: try AllowedSources(["*"]), addresses: .publicOnly, signer: nil,
                                  negotiation: FormatNegotiation(avif: false, webp: false), presets: [:], thumborKey: thumborKey, allowsUnsafeThumborURLs: false, maxAgeSeconds: 60,
                                  logger: Logger(label: "test"))
        }
        let refused = #expect(throws: ServiceError.self) {
            try controller(thumborKey: Array("key".utf8)).read("/_/w:10/plain/http://e.com/a.jpg", accept: nil)
        }
        #expect(refused?.status == .forbidden && refused?.reason == .missingSignature)
        #expect(try controller(thumborKey: nil).read("/_/w:10/plain/http://e.com/a.jpg", accept: nil).source == "http://e.com/a.jpg")
    }
}

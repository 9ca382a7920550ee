import Catalogue
import Foundation
import ImageCore
import TileCacheOrigin

/// Test inputs of ImageCoreTests' own: the fuzz regressions and JPEGs made by the origin's synthesizer (the shared
/// photos and PngSuite are `TestImages`).
enum Fixtures {
    /// Inputs kept from `make fuzz`: mutated files that reached new code, and any input that ever crashed.
    static func fuzzRegressionFiles() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: Bundle.module.resourceURL!.appendingPathComponent("Fixtures/fuzz-regressions"),
                                                    includingPropertiesForKeys: nil)
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    static let synthesizer = ImageSynthesizer(seed: 7)

    /// A realistic baseline JPEG thumbnail (hydrogen's).
    static let thumbnailJPEG: [UInt8] = synthesizer.jpeg(ElementCatalogue.standard.element(number: 1)!, kind: .thumbnail)

    /// A small grayscale JPEG.
    static let grayJPEG: [UInt8] = {
        let pixels = (0..<(64 * 48)).map { UInt8(truncatingIfNeeded: $0 * 7) }
        return try! JPEGEncoder.encode(DecodedImage(width: 64, height: 48, pixelFormat: .gray, pixels: pixels))
    }()

    /// `bytes` with the SOF marker's height and width replaced.
    static func jpeg(_ bytes: [UInt8], claimingWidth width: Int, height: Int) -> [UInt8] {
        JPEGDeclaredSize.claiming(width: width, height: height, in: bytes)!
    }
}

extension DiskCacheMetadata {
    /// Metadata for storing `bytes` (a valid image) under `url`, as the pipeline would after a 200.
    static func fixture(_ url: String, _ bytes: [UInt8], etag: String? = "\"e1\"") throws -> DiskCacheMetadata {
        let header = try ImageInspector().inspectHeader(bytes, subject: url)
        return DiskCacheMetadata(url: url, header: header, bytes: bytes, contentType: "image/jpeg", etag: etag,
                                 lastModified: "Sat, 01 Nov 2025 00:00:00 GMT", cacheControl: "public, max-age=60")
    }
}

import Foundation
import ImageCore
import TileCacheOrigin

/// Test inputs: the PngSuite corpus shipped in the test bundle, and JPEGs made by the origin's synthesizer.
enum Fixtures {
    static var pngSuiteDirectory: URL {
        Bundle.module.resourceURL!.appendingPathComponent("Fixtures/pngsuite")
    }

    static func pngSuiteFiles() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: pngSuiteDirectory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "png" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    static func bytes(_ url: URL) throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }

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
        var bytes = bytes
        var index = 2
        while index + 9 < bytes.count {
            guard bytes[index] == 0xFF else { index += 1; continue }
            let marker = bytes[index + 1]
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            if marker == 0xC0 || marker == 0xC2 {
                bytes[index + 5] = UInt8(height >> 8); bytes[index + 6] = UInt8(height & 0xFF)
                bytes[index + 7] = UInt8(width >> 8); bytes[index + 8] = UInt8(width & 0xFF)
                return bytes
            }
            index += 2 + length
        }
        fatalError("no SOF marker")
    }
}

import Catalogue
public import Foundation
import ImageCore
public import TileCacheOrigin

/// Test inputs the test suites share: real camera photos (photos/LICENSES.md says where each comes from), PngSuite,
/// Robert Ancell's GIF test suite (gifsuite/, CC BY-SA 4.0, from github.com/robert-ancell/pygif), libavif's test files
/// (avif/, BSD-2-Clause, from github.com/AOMediaCodec/libavif tests/data; avif/README.md), libwebp's test image
/// (libwebp/, BSD-3-Clause), and the verdict corpus built from them.
public enum TestImages {
    /// One input of the verdict corpus.
    public struct File: Sendable {
        /// A unique name, usable as a file name (`photo-rocket.jpg`, `quirk-cut-in-dht-rocket.jpg`, ...).
        public var name: String
        /// The bytes.
        public var bytes: [UInt8]
        /// What strict validation must say, where the file's making says it (photos and their quirks); nil otherwise.
        public var expected: JPEGQuirk.Verdict?
    }

    static var resources: URL { Bundle.module.resourceURL! }

    /// The PngSuite folder (its licence is `PngSuite.LICENSE` there).
    public static var pngSuiteDirectory: URL { resources.appendingPathComponent("pngsuite") }

    /// The PngSuite images, sorted by name; names starting with `x` are the suite's broken files.
    public static func pngSuiteFiles() throws -> [URL] { try files(in: pngSuiteDirectory, extension: "png") }

    /// The GIF test suite's folder: `TESTS` names each test, `NAME.conf` says what a decoder must make of `NAME.gif`.
    public static var gifSuiteDirectory: URL { resources.appendingPathComponent("gifsuite") }

    /// The GIF test suite's files, sorted by name.
    public static func gifSuiteFiles() throws -> [URL] { try files(in: gifSuiteDirectory, extension: "gif") }

    /// libavif's test files: `NAME.avif`, and `pillow/NAME.png` for those Pillow decodes (its first frame).
    public static var avifDirectory: URL { resources.appendingPathComponent("avif") }

    /// libavif's test files, sorted by name.
    public static func avifFiles() throws -> [URL] { try files(in: avifDirectory, extension: "avif") }

    /// libwebp's own test image, `test.webp`, and `test_ref.ppm`, its reference decoding (libwebp/README.md).
    public static var libwebpDirectory: URL { resources.appendingPathComponent("libwebp") }

    /// The real camera photos, sorted by name.
    public static func photoFiles() throws -> [URL] { try files(in: resources.appendingPathComponent("photos"), extension: "jpg") }

    /// The contents of `url`.
    public static func bytes(_ url: URL) throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }

    /// Valid, broken, truncated and quirky files from many sources: every photo, every photo with every
    /// `JPEGQuirk`, every PngSuite image, every GIF of the GIF test suite and libavif test file (whole and cut in half),
    /// and the built-in origin's generated JPEG in each of its body forms.
    public static func verdictCorpus() throws -> [File] {
        var corpus: [File] = []
        for url in try photoFiles() {
            let photo = try bytes(url)
            let stem = url.deletingPathExtension().lastPathComponent
            corpus.append(File(name: "photo-\(stem).jpg", bytes: photo, expected: .valid))
            for quirk in JPEGQuirk.all {
                guard let quirky = quirk.apply(to: photo) else { continue }
                corpus.append(File(name: "quirk-\(quirk.name)-\(stem).jpg", bytes: quirky, expected: quirk.expected))
            }
        }
        for url in try pngSuiteFiles() {
            corpus.append(File(name: "pngsuite-\(url.lastPathComponent)", bytes: try bytes(url), expected: nil))
        }
        // Other formats' own test files, and each cut in half as a download cut short would be. The one file libavif
        // 0.11 accepts and later libavif (Pillow's, Chromium's) refuses is left out: see AVIFCodecTests.
        let libwebp = libwebpDirectory.appendingPathComponent("test.webp")
        for url in try gifSuiteFiles() + avifFiles() + [libwebp] where url.lastPathComponent != "clap_irot_imir_non_essential.avif" {
            let bytes = try bytes(url)
            let prefix = ["gif": "gifsuite", "avif": "avif", "webp": "libwebp"][url.pathExtension] ?? url.pathExtension
            corpus.append(File(name: "\(prefix)-\(url.lastPathComponent)", bytes: bytes, expected: nil))
            if bytes.count >= 64 {
                corpus.append(File(name: "\(prefix)-cut-half-\(url.lastPathComponent)", bytes: Array(bytes.prefix(bytes.count / 2)), expected: nil))
            }
        }
        let iron = ElementCatalogue.standard.element(number: 26)!
        let picture = ImageSynthesizer(seed: 7).render(iron, kind: .thumbnail)
        for form in BodyForm.allCases where form != .empty && form != .gzip {
            corpus.append(File(name: "origin-\(form.rawValue).\(form.rawValue.hasPrefix("png") ? "png" : "jpg")",
                               bytes: form.encode(picture), expected: nil))
        }
        return corpus
    }

    /// `jpeg` with an EXIF APP1 segment holding only the Orientation tag, right after SOI (as cameras write it).
    public static func withEXIF(_ jpeg: [UInt8], orientation: Int, bigEndian: Bool) -> [UInt8] {
        func u16(_ value: Int) -> [UInt8] { bigEndian ? [UInt8(value >> 8), UInt8(value & 0xFF)] : [UInt8(value & 0xFF), UInt8(value >> 8)] }
        func u32(_ value: Int) -> [UInt8] { bigEndian ? u16(value >> 16) + u16(value & 0xFFFF) : u16(value & 0xFFFF) + u16(value >> 16) }
        let tiff = (bigEndian ? Array("MM".utf8) : Array("II".utf8)) + u16(42) + u32(8)
            + u16(1) + u16(0x0112) + u16(3) + u32(1) + u16(orientation) + u16(0) + u32(0)
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        return [0xFF, 0xD8, 0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload + jpeg.dropFirst(2)
    }

    /// `jpeg` with `profile` embedded as ICC_PROFILE APP2 chunks right after SOI (chunked as the ICC spec says: at most
    /// 65,519 bytes of profile a chunk, numbered from 1).
    public static func withICC(_ jpeg: [UInt8], profile: [UInt8]) -> [UInt8] {
        let chunkSize = 65_519
        let count = (profile.count + chunkSize - 1) / chunkSize
        var segments: [UInt8] = []
        for index in 0..<count {
            let chunk = profile[(index * chunkSize)..<min(profile.count, (index + 1) * chunkSize)]
            let payload = Array("ICC_PROFILE".utf8) + [0, UInt8(index + 1), UInt8(count)] + chunk
            let length = payload.count + 2
            segments += [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        }
        return [0xFF, 0xD8] + segments + jpeg.dropFirst(2)
    }

    /// The ICC profile embedded in `jpeg` (its APP2 chunks joined in order), or nil: read by hand, not by the code under
    /// test.
    public static func iccProfile(in jpeg: [UInt8]) -> [UInt8]? {
        var chunks: [Int: [UInt8]] = [:]
        var offset = 2
        while offset + 4 <= jpeg.count, jpeg[offset] == 0xFF {
            let marker = jpeg[offset + 1]
            if marker == 0xDA { break }  // start of scan: no more header segments
            let length = Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3])
            let data = Array(jpeg[(offset + 4)..<min(jpeg.count, offset + 2 + length)])
            if marker == 0xE2, data.count > 14, Array(data.prefix(12)) == Array("ICC_PROFILE".utf8) + [0] {
                chunks[Int(data[12])] = Array(data.dropFirst(14))
            }
            offset += 2 + length
        }
        guard !chunks.isEmpty else { return nil }
        return chunks.keys.sorted().flatMap { chunks[$0]! }
    }

    private static func files(in directory: URL, extension pathExtension: String) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == pathExtension }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }
}

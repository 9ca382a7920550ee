import Foundation
import ImageCore
import Testing
import TestSupport

/// GIF against Robert Ancell's GIF test suite: every test's verdict and first frame, pixel for pixel.
@Suite("GIF test suite", .timeLimit(.minutes(5)))
struct GIFSuiteTests {
    /// One test: `NAME.conf`'s `[config]` and `[frame0]` keys.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var config: [String: String]
        var frame: [String: String]
        var testDescription: String { name }
    }

    /// Where TileCache knowingly disagrees with the suite: whether TileCache calls the file valid, and why.
    static let differences: [String: (valid: Bool, why: String)] = [
        "image-zero-width": (false, "an image of no pixels stored without image data; the GIF spec puts an LZW code size and data after every image descriptor, and giflib reads the trailer as the code size"),
        "image-zero-height": (false, "as image-zero-width"),
        "image-zero-size": (false, "as image-zero-width"),
        "max-codes": (false, "an LZW minimum code size of 11; giflib refuses any above 8 (the GIF spec's largest colour table has 8-bit indices)"),
        "no-data": (false, "no image at all, only a screen: a GIF with nothing to show is refused, not served as a transparent pixel"),
        "plain-text": (true, "the suite renders no frame for a plain text extension; TileCache ignores the extension (as browsers do) and decodes the image after it"),
        "gif87a-animation": (true, "four full-screen images, no delays, no loop extension: the suite says readers animate them (its force-animation); TileCache composes images without delays into one picture unless the file loops, so its first frame is the last image"),
    ]

    static func cases() throws -> [Case] {
        let directory = TestImages.gifSuiteDirectory
        let names = try String(contentsOf: directory.appendingPathComponent("TESTS"), encoding: .utf8)
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return try names.map { name in
            var sections: [String: [String: String]] = [:]
            var section = ""
            for line in try String(contentsOf: directory.appendingPathComponent("\(name).conf"), encoding: .utf8).split(separator: "\n") {
                let text = line.trimmingCharacters(in: .whitespaces)
                if text.hasPrefix("#") || text.isEmpty { continue }
                if text.hasPrefix("[") { section = String(text.dropFirst().dropLast()); continue }
                let parts = text.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                if parts.count == 2 { sections[section, default: [:]][parts[0]] = parts[1] }
            }
            return Case(name: name, config: sections["config"] ?? [:], frame: sections["frame0"] ?? [:])
        }
    }

    /// The suite's expected first frame as RGBA: raw `.rgba` bytes or a PNG.
    static func expectedPixels(_ test: Case) throws -> [UInt8]? {
        let directory = TestImages.gifSuiteDirectory
        if let raw = test.frame["pixels"] { return try TestImages.bytes(directory.appendingPathComponent(raw)) }
        guard let png = test.frame["image"] else { return nil }
        return rgba(try ImageInspector().validate(try TestImages.bytes(directory.appendingPathComponent(png)), subject: png).image)
    }

    static func rgba(_ image: DecodedImage) -> [UInt8] {
        switch image.pixelFormat {
        case .rgba: return image.pixels
        case .rgb:
            var out = [UInt8](); out.reserveCapacity(image.width * image.height * 4)
            for index in stride(from: 0, to: image.pixels.count, by: 3) { out += image.pixels[index..<index + 3] + [255] }
            return out
        case .gray: return image.pixels.flatMap { [$0, $0, $0, 255] }
        case .grayAlpha:
            return stride(from: 0, to: image.pixels.count, by: 2).flatMap { [image.pixels[$0], image.pixels[$0], image.pixels[$0], image.pixels[$0 + 1]] }
        }
    }

    @Test("every test's verdict, size and first frame match the suite's, in strict mode", arguments: try cases())
    func suite(_ test: Case) throws {
        let bytes = try TestImages.bytes(TestImages.gifSuiteDirectory.appendingPathComponent(try #require(test.config["input"])))
        let decodes = !(test.config["frames"] ?? "").isEmpty
        let result = Result { () throws(ImageCoreError) in try ImageInspector(strictness: .strict).validate(bytes, subject: test.name) }
        if let (valid, why) = Self.differences[test.name] {
            if valid { _ = try result.get() } else { #expect(throws: ImageCoreError.self, "\(test.name): \(why)") { try result.get() } }
            return
        }
        guard decodes else {
            #expect(throws: ImageCoreError.self, "the suite decodes no frame of \(test.name)") { try result.get() }
            return
        }
        let validated = try result.get()
        #expect(validated.header.format == .gif)
        #expect("\(validated.image.width)x\(validated.image.height)" == "\(test.config["width"] ?? "?")x\(test.config["height"] ?? "?")")
        let expected = try #require(try Self.expectedPixels(test))
        let ours = Self.rgba(validated.image)
        #expect(ours.count == expected.count)
        let differing = zip(ours, expected).enumerated().filter { $0.element.0 != $0.element.1 }.count
        #expect(differing == 0, "\(test.name): \(differing) of \(expected.count) channel values differ from the suite's")
    }

    @Test("every listed difference names a test of the suite, and at most 7 of its 84 tests differ")
    func differencesAreTests() throws {
        let names = Set(try Self.cases().map(\.name))
        #expect(names.count == 84)
        #expect(Self.differences.keys.allSatisfy(names.contains) && Self.differences.count <= 7)
    }

    @Test("an image placed off the screen and disposed of (restore to background) is clipped, not a trap")
    func disposalOffScreen() throws {
        // A 1x1 screen; a control extension with disposal 2 and no delay; a 1x1 image at (0, 5); then a second image.
        var gif = Array("GIF89a".utf8) + [1, 0, 1, 0, 0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
        let image: [UInt8] = [2, 2, 0x44, 0x01, 0]  // LZW code size 2, one block: clear, index 1, end
        gif += [0x21, 0xF9, 4, 0x08, 0, 0, 0, 0]
        gif += [0x2C, 0, 0, 5, 0, 1, 0, 1, 0, 0] + image
        gif += [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0] + image + [0x3B]
        let result = Result { () throws(ImageCoreError) in try ImageInspector(strictness: .lenient).validate(gif, subject: "off-screen.gif") }
        if case .success(let validated) = result { #expect(validated.image.width == 1) }
    }

    @Test("a GIF cut short is truncated in strict mode; lenient mode keeps what decoded and says what is missing")
    func truncation() throws {
        let bytes = try TestImages.bytes(TestImages.gifSuiteDirectory.appendingPathComponent("4095-codes.gif"))
        let cut = Array(bytes.prefix(bytes.count * 2 / 3))
        #expect(throws: ImageCoreError.self) { try ImageInspector(strictness: .strict).validate(cut, subject: "cut.gif") }
        do {
            _ = try ImageInspector(strictness: .strict).validate(cut, subject: "cut.gif")
        } catch {
            #expect(error.reason == .truncated)
        }
        let lenient = try ImageInspector(strictness: .lenient).validate(cut, subject: "cut.gif")
        #expect(lenient.image.width == 100 && lenient.warnings.contains { $0.contains("left transparent") })
        // Without the trailer: complete frames, but the file ends where the next block should start.
        let noTrailer = Array(bytes.dropLast())
        #expect(bytes.last == 0x3B)
        do {
            _ = try ImageInspector(strictness: .strict).validate(noTrailer, subject: "no-trailer.gif")
            Issue.record("a GIF without its trailer passed strict validation")
        } catch {
            #expect(error.reason == .truncated && error.message.contains("trailer"))
        }
    }

    /// A GIF of `frames` frames of `side` x `side` pixels of colour 0, LZW-coded as [clear, 0, 0] groups of 3-bit codes
    /// (the table never grows past 8 entries, so the code size stays 3), each frame's data ending with EOI.
    static func gif(side: Int, frames: Int, screen: Int? = nil) -> [UInt8] {
        func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        var codes: [Int] = []
        for _ in 0..<(side * side / 2) { codes += [4, 0, 0] }
        codes.append(5)
        var data: [UInt8] = []
        var accumulator = 0, bits = 0
        for code in codes {
            accumulator |= code << bits
            bits += 3
            while bits >= 8 { data.append(UInt8(accumulator & 0xFF)); accumulator >>= 8; bits -= 8 }
        }
        if bits > 0 { data.append(UInt8(accumulator & 0xFF)) }
        var blocks: [UInt8] = [2]
        for start in stride(from: 0, to: data.count, by: 255) {
            let chunk = data[start..<min(data.count, start + 255)]
            blocks += [UInt8(chunk.count)] + chunk
        }
        blocks.append(0)
        let screenSide = screen ?? side
        var gif = Array("GIF89a".utf8) + le16(screenSide) + le16(screenSide) + [0x81, 0, 0] + [0, 0, 0, 255, 255, 255, 9, 9, 9, 7, 7, 7]
        for _ in 0..<frames { gif += [0x2C] + le16(0) + le16(0) + le16(side) + le16(side) + [0] + blocks }
        gif.append(0x3B)
        return gif
    }

    @Test("frames are bounded before they are decoded: a frame above the pixel limit, and an animation above 16 x the limit in all")
    func frameBounds() throws {
        let one = try ImageInspector(maxPixels: 10_000).validate(Self.gif(side: 64, frames: 1), subject: "one.gif")
        #expect(one.image.width == 64 && one.image.pixelFormat == .rgb && one.image.pixels.allSatisfy { $0 == 0 })
        let forty = try ImageInspector(maxPixels: 10_000).validate(Self.gif(side: 64, frames: 39), subject: "39.gif")
        #expect(forty.warnings.contains { $0.contains("39 images") })
        for (name, gif) in [("50 frames of 4,096 pixels", Self.gif(side: 64, frames: 50)),
                            ("a 200x200 frame on a 1x1 screen", Self.gif(side: 200, frames: 1, screen: 1))] {
            do {
                _ = try ImageInspector(maxPixels: 10_000).validate(gif, subject: "bomb.gif")
                Issue.record("\(name) passed a 10,000-pixel limit")
            } catch {
                #expect(error.reason == .dimensions, "\(name): \(error)")
            }
        }
    }
}

/// AVIF against libavif's own test files: verdicts, and pixels against Pillow's decoding of the same files.
@Suite("AVIF codec", .timeLimit(.minutes(5)), .heavy)
struct AVIFCodecTests {
    /// The files a strict reader refuses, as libavif's README describes them, and those libavif 0.11 (Debian 12's)
    /// refuses where Pillow's libavif 1.4 reads them.
    static let refused: Set<String> = [
        "alpha_noispe.avif", "color_grid_alpha_grid_tile_shared_in_dimg.avif",  // both refuse
        "draw_points_idat_metasize0.avif",  // a meta box of size 0 ("to the end of the file"): 0.11's parser refuses it
        "colors-animated-8bpc-audio.avif",  // an audio track: 0.11 checks its (absent) image size
    ]

    @Test("every file's verdict: libavif's strict refusals refused, the rest valid at their container's size")
    func verdicts() throws {
        for url in try TestImages.avifFiles() {
            let name = url.lastPathComponent
            let result = Result { () throws(ImageCoreError) in try ImageInspector().validate(try! TestImages.bytes(url), subject: name) }
            if Self.refused.contains(name) {
                #expect(throws: ImageCoreError.self, "\(name)") { try result.get() }
            } else {
                let validated = try result.get()
                #expect(validated.header.format == .avif, "\(name)")
            }
        }
    }

    @Test("first frames equal Pillow's decoding of the same files within a rounding error (PSNR >= 45 dB)")
    func againstPillow() throws {
        var compared = 0
        for url in try TestImages.avifFiles() {
            let name = url.deletingPathExtension().lastPathComponent
            let reference = TestImages.avifDirectory.appendingPathComponent("pillow/\(name).png")
            guard FileManager.default.fileExists(atPath: reference.path), !Self.refused.contains(url.lastPathComponent) else { continue }
            let ours = try ImageInspector().validate(try TestImages.bytes(url), subject: name).image
            var theirs = try ImageInspector().validate(try TestImages.bytes(reference), subject: name).image
            if name == "color_grid_alpha_nogrid" {
                // libavif 0.11 does not pair a grid colour image with an alpha image that is not a grid: it decodes the
                // colour alone. Its colours are still compared.
                #expect(ours.pixelFormat == .rgb && theirs.pixelFormat == .rgba)
                theirs = DecodedImage(width: theirs.width, height: theirs.height, pixelFormat: .rgb, pixels: stride(from: 0, to: theirs.pixels.count, by: 4).flatMap { theirs.pixels[$0..<$0 + 3] })
            }
            #expect(ours.width == theirs.width && ours.height == theirs.height && ours.pixelFormat == theirs.pixelFormat, "\(name)")
            guard ours.pixels.count == theirs.pixels.count else { continue }
            let score = ImageProcessorTests.psnr(ours, theirs)
            #expect(score >= 45, "\(name): \(score) dB from Pillow's")
            compared += 1
        }
        #expect(compared >= 15)
    }

    @Test("irot and imir become the EXIF orientation they mean (abc_color_irot_alpha_irot: a quarter turn, 8 as Pillow says)")
    func orientation() throws {
        let bytes = try TestImages.bytes(TestImages.avifDirectory.appendingPathComponent("abc_color_irot_alpha_irot.avif"))
        let header = try ImageInspector().inspectHeader(bytes, subject: "abc")
        #expect(header.orientation == 8 && header.uprightWidth == 256 && header.uprightHeight == 512)
        // Each rotation and mirror against the EXIF orientation it is (rotate anticlockwise, then mirror).
        let table = [(0, nil, 1), (0, 1, 2), (2, nil, 3), (0, 0, 4), (1, 0, 5), (3, nil, 6), (3, 0, 7), (1, nil, 8),
                     (2, 1, 4), (2, 0, 2), (1, 1, 7), (3, 1, 5)]
        for (turns, mode, exif) in table {
            #expect(ImageHeader.exifOrientation(heifQuarterTurns: turns, mirrorMode: mode) == exif, "irot \(turns), imir \(String(describing: mode))")
        }
    }

    @Test("the file libavif 0.11 accepts and libavif 1.x refuses (non-essential transformative properties) is valid, with the clap warning")
    func nonEssentialTransforms() throws {
        let bytes = try TestImages.bytes(TestImages.avifDirectory.appendingPathComponent("clap_irot_imir_non_essential.avif"))
        let validated = try ImageInspector().validate(bytes, subject: "clap")
        #expect(validated.warnings.contains { $0.contains("clap") })
    }

    @Test("an AVIF cut short is truncated; a variant encoded as AVIF decodes to the asked size, close to the source")
    func truncationAndEncoding() throws {
        let bytes = try TestImages.bytes(TestImages.avifDirectory.appendingPathComponent("kodim23_yuv420_8bpc.avif"))
        do {
            _ = try ImageInspector().validate(Array(bytes.prefix(bytes.count / 2)), subject: "cut.avif")
            Issue.record("half an AVIF passed validation")
        } catch {
            #expect(error.reason == .truncated)
        }
        let made = try ImageProcessor.process(bytes, ImageProcessing(width: 256, format: .avif), subject: "kodim23")
        #expect(ImageFormat.sniff(made.bytes) == .avif && made.width == 256 && made.height == 171)
        let decoded = try ImageInspector().validate(made.bytes, subject: "out.avif")
        #expect(decoded.header.width == 256 && decoded.header.height == 171)
        let png = try ImageProcessor.process(bytes, ImageProcessing(width: 256, format: .png), subject: "kodim23")
        let score = ImageProcessorTests.psnr(decoded.image, try ImageInspector().validate(png.bytes, subject: "png").image)
        #expect(score >= 30, "AVIF q82 is \(score) dB from the lossless variant")
        // Alpha survives: a PNG with alpha to AVIF and back.
        let alpha = try TestImages.bytes(TestImages.pngSuiteDirectory.appendingPathComponent("basn6a08.png"))
        let withAlpha = try ImageProcessor.process(alpha, ImageProcessing(width: 32, format: .avif), subject: "basn6a08")
        #expect(try ImageInspector().validate(withAlpha.bytes, subject: "alpha.avif").image.pixelFormat == .rgba)
    }

    @Test("hostile containers are judged without a trap and quickly: an empty meta box, a 64-bit box size near Int.max, an iloc of zero-byte fields claiming 65,535 items of 65,535 extents")
    func hostileContainers() throws {
        func box(_ type: String, _ content: [UInt8]) -> [UInt8] {
            let size = content.count + 8
            return [UInt8(size >> 24 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)] + Array(type.utf8) + content
        }
        let ftyp = box("ftyp", Array("avif".utf8) + [0, 0, 0, 0] + Array("mif1".utf8))
        let huge: [UInt8] = [0, 0, 0, 1] + Array("free".utf8) + [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        // iloc version 1, every size 0, 65,535 items, each: id, construction method 0, data reference, 65,535 extents.
        let item: [UInt8] = [0, 1, 0, 0, 0, 0, 0xFF, 0xFF]
        let iloc = box("iloc", [1, 0, 0, 0] + [0, 0] + [0xFF, 0xFF] + Array((0..<65_535).map { _ in item }.joined()))
        let meta = box("meta", [0, 0, 0, 0] + iloc)
        for (name, bytes) in [("empty meta", ftyp + box("meta", [])), ("huge box", ftyp + huge), ("zero-size iloc", ftyp + meta)] {
            #expect(ImageFormat.sniff(bytes) == .avif, "\(name)")
            #expect(throws: ImageCoreError.self, "\(name)") { try ImageInspector().validate(bytes, subject: name) }
        }
    }

    @Test("sniffing: ftyp with avif or avis as the major or a compatible brand; HEIC and MP4 are not AVIF")
    func sniffing() {
        func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
            let size = 16 + 4 * compatible.count
            return [0, 0, 0, UInt8(size)] + Array("ftyp".utf8) + Array(major.utf8) + [0, 0, 0, 0] + compatible.flatMap { Array($0.utf8) }
        }
        #expect(ImageFormat.sniff(ftyp("avif", ["mif1"])) == .avif)
        #expect(ImageFormat.sniff(ftyp("avis", [])) == .avif)
        #expect(ImageFormat.sniff(ftyp("mif1", ["miaf", "avif"])) == .avif)
        #expect(ImageFormat.sniff(ftyp("heic", ["mif1", "heic"])) == nil)
        #expect(ImageFormat.sniff(ftyp("isom", ["mp41"])) == nil)
        #expect(ImageFormat(contentType: "image/avif") == .avif)
    }
}

/// WebP against libwebp's own test image and its reference decoding.
@Suite("libwebp's test image", .timeLimit(.minutes(2)))
struct LibwebpTestImageTests {
    /// test_ref.ppm predates libwebp's current YUV-to-RGB rounding: 13,265 of its 49,152 bytes are 1 away from what
    /// libwebp decodes today, Debian's 1.2.4 here and Pillow 13's wheel alike (measured); none is further.
    @Test("examples/test.webp decodes to examples/test_ref.ppm, libwebp's reference (libwebp 3757b8af), every byte within 1")
    func referenceDecoding() throws {
        let webp = try TestImages.bytes(TestImages.libwebpDirectory.appendingPathComponent("test.webp"))
        let ppm = try TestImages.bytes(TestImages.libwebpDirectory.appendingPathComponent("test_ref.ppm"))
        // P6, width, height, 255, then RGB bytes; each header field ends with one whitespace byte.
        var fields: [String] = [], index = 0
        while fields.count < 4 {
            var field = ""
            while index < ppm.count, !(ppm[index] == 0x0A || ppm[index] == 0x20) { field.append(Character(UnicodeScalar(ppm[index]))); index += 1 }
            index += 1
            if !field.isEmpty { fields.append(field) }
        }
        let (width, height) = (try #require(Int(fields[1])), try #require(Int(fields[2])))
        #expect(fields[0] == "P6" && fields[3] == "255")
        let reference = Array(ppm[index...])
        let decoded = try ImageInspector().validate(webp, subject: "test.webp").image
        #expect(decoded.width == width && decoded.height == height && decoded.pixelFormat == .rgb)
        let largest = zip(decoded.pixels, reference).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(reference.count == width * height * 3 && decoded.pixels.count == reference.count && largest <= 1,
                "a byte is \(largest) from libwebp's reference")
    }
}


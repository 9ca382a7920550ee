import Catalogue
import Foundation
import ImageCore
import Testing
import TestSupport
import TileCacheOrigin

@Suite("ImageInspector", .timeLimit(.minutes(5)), .heavy)
struct ImageInspectorTests {
    let inspector = ImageInspector()

    @Test("sniffs formats by magic bytes, never by name or type")
    func sniffing() {
        #expect(ImageFormat.sniff(Fixtures.thumbnailJPEG) == .jpeg)
        #expect(ImageFormat.sniff([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0]) == .png)
        #expect(ImageFormat.sniff(Array("GIF89a....".utf8)) == .gif)
        #expect(ImageFormat.sniff(Array("<html>".utf8)) == nil)
        #expect(ImageFormat.sniff([0xFF, 0xD8]) == nil)
        #expect(ImageFormat.sniff([UInt8]()) == nil)
    }

    @Test("reads JPEG dimensions from the header and decodes every pixel")
    func validJPEG() throws {
        let header = try inspector.inspectHeader(Fixtures.thumbnailJPEG, subject: "h.jpg")
        let size = Fixtures.synthesizer.size(of: ElementCatalogue.standard.element(number: 1)!, kind: .thumbnail)
        #expect(header.format == .jpeg && header.width == size.width && header.height == size.height)
        let validated = try inspector.validate(Fixtures.thumbnailJPEG, subject: "h.jpg", contentType: "image/jpeg")
        #expect(validated.image.width == size.width && validated.image.pixelFormat == .rgb)
        #expect(validated.image.cost == size.width * size.height * 3)
        #expect(validated.warnings.isEmpty)
    }

    @Test("a grayscale JPEG decodes to one byte per pixel")
    func grayJPEG() throws {
        let validated = try inspector.validate(Fixtures.grayJPEG, subject: "gray.jpg")
        #expect(validated.image.pixelFormat == .gray && validated.image.cost == 64 * 48)
    }

    @Test("a JPEG served as text/plain is valid, with a content-type warning")
    func contentTypeMismatch() throws {
        let validated = try inspector.validate(Fixtures.thumbnailJPEG, subject: "u", contentType: "text/plain")
        #expect(validated.warnings.contains { $0.contains("content-type mismatch") })
    }

    @Test("an HTML page served as image/jpeg is not an image")
    func htmlIsNotAnImage() {
        let html = Array("<!DOCTYPE html><html><body>Not found</body></html>".utf8)
        let error = #expect(throws: ImageCoreError.self) {
            try inspector.validate(html, subject: "http://x/a.jpg", contentType: "image/jpeg")
        }
        #expect(error?.reason == .notAnImage)
        #expect(error?.subject == "http://x/a.jpg")
        #expect(error?.message.contains("HTML") == true)
    }

    @Test("zero bytes, wrong magic, a GIF cut inside its header and a BMP each fail with their reason")
    func wrongInputs() {
        #expect(reason { try inspector.validate([], subject: "empty") } == .notAnImage)
        #expect(reason { try inspector.validate([0, 1, 2, 3, 4, 5, 6, 7, 8], subject: "junk") } == .notAnImage)
        #expect(reason { try inspector.validate(Array("GIF89a\u{1}\u{0}\u{1}\u{0}".utf8), subject: "g") } == .truncated)
        #expect(reason { try inspector.validate(Array("BM".utf8) + [UInt8](repeating: 0, count: 30), subject: "b") } == .unsupportedFormat)
    }

    @Test("a truncated JPEG fails as truncated in strict mode and is accepted in lenient mode")
    func truncatedJPEG() throws {
        let cut = Array(Fixtures.thumbnailJPEG.prefix(Fixtures.thumbnailJPEG.count / 2))
        #expect(try inspector.inspectHeader(cut, subject: "cut").width > 0)  // the header alone looks fine
        #expect(reason { try inspector.validate(cut, subject: "cut") } == .truncated)
        let lenient = ImageInspector(strictness: .lenient)
        let validated = try lenient.validate(cut, subject: "cut")
        #expect(!validated.warnings.isEmpty)
    }

    @Test("corrupt entropy-coded data fails as corrupt")
    func corruptJPEG() {
        var bytes = Fixtures.thumbnailJPEG
        let start = bytes.count / 3
        for index in start..<(start + 400) where bytes[index] != 0xFF { bytes[index] = 0xFF }
        let failure = reason { try inspector.validate(bytes, subject: "corrupt") }
        #expect(failure == .corrupt || failure == .truncated)
        var garbage = Fixtures.thumbnailJPEG
        for index in stride(from: garbage.count / 3, to: garbage.count / 2, by: 7) { garbage[index] = 0xFF; garbage[index - 1] = 0xD0 }
        #expect(reason { try inspector.validate(garbage, subject: "corrupt") } != nil)
    }

    @Test("check (scaled-down decode) reaches the same verdicts as a full decode")
    func checkMatchesValidate() throws {
        let photo = Fixtures.synthesizer.jpeg(ElementCatalogue.standard.element(number: 79)!, kind: .full)
        let full = try inspector.validate(photo, subject: "p")
        let checked = try inspector.check(photo, subject: "p")
        #expect(checked.header == full.header)
        let cut = Array(photo.prefix(photo.count * 2 / 3))
        #expect(reason { try inspector.check(cut, subject: "cut") } == .truncated)
        var corrupt = photo
        for index in stride(from: corrupt.count / 3, to: corrupt.count / 2, by: 7) { corrupt[index] = 0xFF; corrupt[index - 1] = 0xD0 }
        #expect(reason { try inspector.check(corrupt, subject: "c") } == reason { try inspector.validate(corrupt, subject: "c") })
        #expect(reason { try inspector.check(corrupt, subject: "c") } != nil)
        for file in try TestImages.pngSuiteFiles() {
            let bytes = try TestImages.bytes(file)
            let expected = file.lastPathComponent.hasPrefix("x")
            #expect((reason { try inspector.check(bytes, subject: file.path) } != nil) == expected, "\(file.lastPathComponent)")
        }
    }

    @Test("a header claiming 65500x65500 is rejected before any pixel buffer is allocated")
    func hugeDeclaredSize() {
        let huge = Fixtures.jpeg(Fixtures.thumbnailJPEG, claimingWidth: 65500, height: 65500)
        let error = #expect(throws: ImageCoreError.self) { try inspector.inspectHeader(huge, subject: "huge") }
        #expect(error?.reason == .dimensions)
        #expect(error?.message.contains("65500x65500") == true)
        #expect(reason { try inspector.validate(huge, subject: "huge") } == .dimensions)
    }

    @Test("a custom pixel limit applies to header inspection")
    func pixelLimit() {
        let small = ImageInspector(maxPixels: 100)
        #expect(reason { try small.inspectHeader(Fixtures.thumbnailJPEG, subject: "t") } == .dimensions)
    }

    @Test("every valid PngSuite file decodes", arguments: try TestImages.pngSuiteFiles().filter { !$0.lastPathComponent.hasPrefix("x") })
    func pngSuiteValid(file: URL) throws {
        let bytes = try TestImages.bytes(file)
        let header = try inspector.inspectHeader(bytes, subject: file.path)
        let validated = try inspector.validate(bytes, subject: file.path, contentType: "image/png")
        #expect(validated.image.width == header.width && validated.image.height == header.height)
        #expect(validated.image.cost == header.width * header.height * validated.image.pixelFormat.bytesPerPixel)
    }

    @Test("every broken PngSuite file (x*) is rejected", arguments: try TestImages.pngSuiteFiles().filter { $0.lastPathComponent.hasPrefix("x") })
    func pngSuiteBroken(file: URL) throws {
        let bytes = try TestImages.bytes(file)
        let failure = reason { try inspector.validate(bytes, subject: file.path) }
        #expect(failure != nil, "\(file.lastPathComponent) was accepted")
    }

    @Test("a PNG with a bad IHDR CRC fails as corrupt, a truncated IDAT as truncated")
    func pngDamage() throws {
        let good = try TestImages.bytes(TestImages.pngSuiteDirectory.appendingPathComponent("basn6a16.png"))
        var badCRC = good
        badCRC[29] ^= 0xFF  // last byte of IHDR's CRC
        #expect(reason { try inspector.validate(badCRC, subject: "crc") } == .corrupt)
        let cut = Array(good.prefix(good.count / 2))
        #expect(reason { try inspector.validate(cut, subject: "cut") } == .truncated)
    }

    @Test("a PNG chunk that declares more data than the file holds is truncated before libpng allocates it")
    func pngChunkPastTheEnd() throws {
        // Found by make fuzz: 787 bytes whose iTXt chunk claims 2 GB, which libpng allocated in full before reading.
        let file = try #require(try Fixtures.fuzzRegressionFiles().first { $0.lastPathComponent.hasPrefix("oom-f99fef16") })
        let error = #expect(throws: ImageCoreError.self) { try inspector.validate(TestImages.bytes(file), subject: "bomb.png") }
        #expect(error?.reason == .truncated)
        #expect(error?.message == "PNG chunk 'iTXt' at byte 154 declares 2074476609 bytes of data, but only 625 bytes follow its header")
    }

    /// A WebP file of `Fixtures/webp` (made by its make.py with Pillow's libwebp).
    static func webp(_ name: String) throws -> [UInt8] {
        try TestImages.bytes(Bundle.module.resourceURL!.appendingPathComponent("Fixtures/webp/\(name).webp"))
    }

    @Test("WebP: size from the VP8, VP8L or VP8X header, then every pixel (every frame) decoded", arguments: [
        ("lossy", 32, 24, DecodedImage.PixelFormat.rgb), ("lossless", 32, 24, .rgb), ("alpha", 32, 24, .rgba),
        ("alpha-lossless", 32, 24, .rgba), ("animated", 16, 16, .rgba),
    ])
    func webpDecodes(name: String, width: Int, height: Int, pixelFormat: DecodedImage.PixelFormat) throws {
        let bytes = try Self.webp(name)
        #expect(ImageFormat.sniff(bytes) == .webp && ImageFormat.webp.isDecodable)
        let header = try inspector.inspectHeader(bytes, subject: name)
        #expect(header.format == .webp && header.width == width && header.height == height)
        let validated = try inspector.validate(bytes, subject: name, contentType: "image/webp")
        #expect(validated.header == header)
        #expect(validated.image.width == width && validated.image.height == height && validated.image.pixelFormat == pixelFormat)
        #expect(validated.image.cost == width * height * pixelFormat.bytesPerPixel)
        #expect(try inspector.check(bytes, subject: name).header == header)
        if name == "animated" {
            #expect(validated.warnings == ["animated WebP (20 frames): every frame decodes; the first frame's pixels are used"])
            #expect(Array(validated.image.pixels.prefix(4)) == [0, 255, 128, 255])  // the first frame's colour, opaque
        } else {
            #expect(validated.warnings.isEmpty)
        }
        if name == "lossless" {  // exactly the gradient make.py drew
            var expected: [UInt8] = []
            for y in 0..<height {
                for x in 0..<width { expected += [UInt8(x * 8), UInt8(y * 10), UInt8((x + y) * 4)] }
            }
            #expect(validated.image.pixels == expected)
        }
    }

    @Test("WebP cut anywhere is truncated; damaged headers, chunks, partitions, bitstreams and frames are corrupt")
    func webpDamage() throws {
        for name in ["lossy", "lossless", "alpha", "alpha-lossless", "animated"] {
            let bytes = try Self.webp(name)
            for length in 12..<bytes.count {
                let cut = Array(bytes.prefix(length))
                let error = #expect(throws: ImageCoreError.self, "\(name) cut to \(length)") { try inspector.validate(cut, subject: "cut") }
                #expect(error?.reason == .truncated, "\(name) cut to \(length): \(error?.message ?? "")")
            }
            #expect(try inspector.validate(bytes + [0, 0, 0, 0], subject: "trailing").header.byteCount == bytes.count + 4)
        }
        // Byte offsets (found by flipping every byte) where libwebp's verdict is each kind of damage.
        for (name, offset, message) in [
            ("lossy", 14, "WebP header unreadable: invalid WebP data (libwebp: bitstream error)"),  // the VP8 chunk's name
            ("lossy", 60, "WebP decode failed: a chunk or partition declares more data than the file holds"),
            ("lossless", 40, "WebP decode failed: invalid WebP data (libwebp: bitstream error)"),
            ("alpha", 50, "WebP decode failed: invalid WebP data (libwebp: bitstream error)"),  // the ALPH chunk's data
            ("alpha-lossless", 50, "WebP decode failed: invalid WebP data (libwebp: bitstream error)"),
            ("animated", 30, "animated WebP unreadable: its chunks are damaged or inconsistent"),  // the ANIM chunk's name
            ("animated", 85, "animated WebP frame 1 of 20 does not decode"),
        ] {
            var bytes = try Self.webp(name)
            bytes[offset] ^= 0xFF
            let error = #expect(throws: ImageCoreError.self, "\(name) flipped at \(offset)") { try inspector.validate(bytes, subject: "flipped") }
            #expect(error?.reason == .corrupt && error?.message == message, "\(name) flipped at \(offset): \(error?.message ?? "")")
        }
    }

    @Test("every single-byte flip of every WebP fixture: no crash, and check agrees with validate")
    func webpFlipsAgree() throws {
        for name in ["lossy", "lossless", "alpha", "alpha-lossless", "animated"] {
            let original = try Self.webp(name)
            for offset in 12..<original.count {
                var bytes = original
                bytes[offset] ^= 0xFF
                let checked = Result { () throws(ImageCoreError) in try inspector.check(bytes, subject: "f").header }
                let validated = Result { () throws(ImageCoreError) in try inspector.validate(bytes, subject: "f").header }
                #expect(checked == validated, "\(name) flipped at \(offset)")
            }
        }
    }

    @Test("a WebP the thumbnailer wrote (libwebp, lossy) is valid at the size it was made")
    func webpFromTheProcessor() throws {
        let made = try ImageProcessor.process(Fixtures.thumbnailJPEG, ImageProcessing(width: 40, format: .webp), subject: "t")
        #expect(ImageFormat.sniff(made.bytes) == .webp)
        let validated = try inspector.validate(made.bytes, subject: "t.webp")
        #expect(validated.header.width == 40 && validated.header.height == made.image.height && validated.image.pixelFormat == .rgb)
    }

    @Test("an animation whose frames compose more than 16 times maxPixels is refused before decoding them")
    func webpAnimationLimit() throws {
        let bytes = try Self.webp("animated")  // 20 frames of 16x16: 5,120 canvas pixels
        #expect(try ImageInspector(maxPixels: 320).validate(bytes, subject: "a").image.width == 16)
        let error = #expect(throws: ImageCoreError.self) { try ImageInspector(maxPixels: 319).validate(bytes, subject: "a") }
        #expect(error?.reason == .dimensions)
        #expect(error?.message == "animated WebP of 20 frames on a 16x16 canvas: 20 x 256 pixels to decode, above the limit of 16 x 319")
        #expect(try ImageInspector(maxPixels: 319).inspectHeader(bytes, subject: "a").width == 16)  // the header alone is fine
    }

    /// `jpeg` with its SOF0 frame header turned into `marker` (0xC3: SOF3), with `precision` when given.
    static func reframed(_ jpeg: [UInt8], marker: UInt8, precision: UInt8? = nil) throws -> [UInt8] {
        var bytes = jpeg
        var offset = 2
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            if bytes[offset + 1] == 0xC0 {
                bytes[offset + 1] = marker
                if let precision { bytes[offset + 4] = precision }
                return bytes
            }
            offset += 2 + ((Int(bytes[offset + 2]) << 8) | Int(bytes[offset + 3]))
        }
        throw TestFailure("no SOF0 segment before the first scan")
    }

    @Test("12-bit, lossless and hierarchical JPEGs are unsupported-format, named, from the frame header alone", arguments: [
        (UInt8(0xC1), UInt8?(12), "12-bit JPEG (precision 12)"), (0xC2, 12, "12-bit JPEG (precision 12)"),
        (0xC3, nil, "lossless JPEG (SOF3)"), (0xC7, nil, "lossless JPEG (SOF7)"), (0xCB, nil, "lossless JPEG (SOF11)"),
        (0xCF, nil, "lossless JPEG (SOF15)"), (0xC5, nil, "hierarchical JPEG (SOF5)"), (0xCE, nil, "hierarchical JPEG (SOF14)"),
    ])
    func unsupportedJPEGs(marker: UInt8, precision: UInt8?, kind: String) throws {
        let bytes = try Self.reframed(Fixtures.thumbnailJPEG, marker: marker, precision: precision)
        let message = "\(kind) is not supported (8-bit baseline, extended and progressive JPEGs are)"
        let lenient = ImageInspector(strictness: .lenient)
        let ways: [(String, () throws -> Void)] = [
            ("strict", { _ = try inspector.validate(bytes, subject: "j") }),
            ("header", { _ = try inspector.inspectHeader(bytes, subject: "j") }),
            ("lenient", { _ = try lenient.validate(bytes, subject: "j") }),
            ("check", { _ = try inspector.check(bytes, subject: "j") }),
        ]
        for (strictness, body) in ways {
            let error = #expect(throws: ImageCoreError.self, "\(strictness)") { try body() }
            #expect(error?.reason == .unsupportedFormat && error?.message == message, "\(strictness): \(error?.message ?? "")")
        }
        if precision == nil {  // nothing after the marker is read: a file that ends right after it says the same
            let start = try #require((0..<(bytes.count - 1)).first { bytes[$0] == 0xFF && bytes[$0 + 1] == marker })
            let error = #expect(throws: ImageCoreError.self) { try inspector.validate(Array(bytes.prefix(start + 2)), subject: "j") }
            #expect(error?.reason == .unsupportedFormat)
        }
    }

    @Test("a frame header no valid JPEG has (precision 16 for DCT, the reserved JPG marker) stays corrupt")
    func invalidFrameHeaders() throws {
        let sixteen = try Self.reframed(Fixtures.thumbnailJPEG, marker: 0xC0, precision: 16)
        #expect(reason { try inspector.validate(sixteen, subject: "p16") } == .corrupt)
        let reserved = try Self.reframed(Fixtures.thumbnailJPEG, marker: 0xC8)
        #expect(reason { try inspector.validate(reserved, subject: "jpg") } == .corrupt)
    }

    @Test("PNG chunk types are named by their ASCII letters, a byte that is not printable as \\xNN")
    func pngChunkNames() throws {
        let good = try TestImages.bytes(TestImages.pngSuiteDirectory.appendingPathComponent("basn6a16.png"))
        let signatureAndIHDR = Array(good.prefix(33))
        // A chunk that declares 2 GB: our length check names it.
        let long = signatureAndIHDR + [0x7F, 0xFF, 0xFF, 0xFF] + [0x61, 0x01, 0xFF, 0x5A] + Array("xxxx".utf8)
        let error = #expect(throws: ImageCoreError.self) { try inspector.validate(long, subject: "long.png") }
        #expect(error?.message == #"PNG chunk 'a\x01\xFFZ' at byte 33 declares 2147483647 bytes of data, but only 4 bytes follow its header"#)
        // An invalid chunk type libpng refuses: its "Q[01][E9]t" is written the same way.
        let invalid = signatureAndIHDR + [0, 0, 0, 1] + [0x51, 0x01, 0xE9, 0x74] + [0x21] + [0, 0, 0, 0] + Array(good.dropFirst(33))
        let refused = #expect(throws: ImageCoreError.self) { try inspector.validate(invalid, subject: "invalid.png") }
        #expect(refused?.reason == .corrupt && refused?.message == #"PNG header invalid: Q\x01\xE9t: invalid chunk type"#)
        // Letters pass through as they are (libpng's warning about a known chunk with a bad CRC).
        var text = Array("tEXtKey\u{0}value".utf8)
        text = signatureAndIHDR + [0, 0, 0, UInt8(text.count - 4)] + text + [0, 0, 0, 0] + Array(good.dropFirst(33))
        let warned = try inspector.validate(text, subject: "text.png")
        #expect(warned.warnings == ["tEXt: CRC error"])
    }

    private func reason<T>(_ body: () throws -> T) -> ImageCoreError.Reason? {
        do {
            _ = try body()
            return nil
        } catch let error as ImageCoreError {
            return error.reason
        } catch {
            return nil
        }
    }
}

/// The origin's other forms of one image (docs/reliability.md, fault matrix) decode to that image.
@Suite("origin body forms", .timeLimit(.minutes(5)), .heavy)
struct BodyFormDecodingTests {
    static let picture = ImageSynthesizer().render(ElementCatalogue.standard.element(number: 26)!, kind: .thumbnail)

    /// Mean absolute difference per sample between two RGB pixel arrays.
    static func meanDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
        Double(zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(max(1, a.count))
    }

    @Test("each valid form decodes to the generated picture", arguments: [
        (BodyForm.png, 0.0), (.png16, 0.0), (.pngInterlaced, 0.0), (.progressive, 6.0), (.cmyk, 6.0), (.gray, 40.0),
    ])
    func decodesToThePicture(form: BodyForm, tolerance: Double) throws {
        let picture = Self.picture
        let bytes = form.encode(picture)
        var decoded = try ImageInspector().validate(bytes, subject: form.rawValue).image
        #expect(decoded.width == picture.width && decoded.height == picture.height)
        if decoded.pixelFormat == .gray {  // compare with the picture's luma
            decoded = DecodedImage(width: decoded.width, height: decoded.height, pixelFormat: .rgb,
                                   pixels: decoded.pixels.flatMap { [$0, $0, $0] })
        }
        let difference = Self.meanDifference(decoded.pixels, picture.pixels)
        #expect(difference <= tolerance, "\(form.rawValue): mean difference \(difference)")
    }

    @Test("gzip is the baseline JPEG, gzip-compressed; the broken PNG forms fail with their reasons")
    func gzipAndBrokenForms() throws {
        let gzip = BodyForm.gzip.encode(Self.picture)
        #expect(gzip.starts(with: [0x1F, 0x8B]))
        for (form, reason) in [(BodyForm.pngBadCRC, ImageCoreError.Reason.corrupt), (.pngTruncatedIDAT, .truncated), (.empty, .notAnImage)] {
            let bytes = form.encode(Self.picture)
            let error = #expect(throws: ImageCoreError.self) { try ImageInspector().validate(bytes, subject: form.rawValue) }
            #expect(error?.reason == reason, "\(form.rawValue)")
        }
    }
}

/// The fuzz harness's checks (Fuzz/Sources/ImageFuzzer) on the inputs kept from fuzzing runs.
@Suite("fuzz regressions", .timeLimit(.minutes(5)), .heavy)
struct FuzzRegressionTests {
    @Test("kept fuzz inputs: no crash, and the validation check agrees with the full decode",
          arguments: try Fixtures.fuzzRegressionFiles())
    func keptInput(file: URL) throws {
        let bytes = try TestImages.bytes(file)
        let inspector = ImageInspector(maxPixels: 4_000_000)
        let checked = Result { () throws(ImageCoreError) in try inspector.check(bytes, subject: file.lastPathComponent) }
        let validated = Result { () throws(ImageCoreError) in try inspector.validate(bytes, subject: file.lastPathComponent) }
        switch (checked, validated) {
        case (.success, .success), (.failure, .failure): break
        default: Issue.record("check and validate disagree on \(file.lastPathComponent): \(checked) vs \(validated)")
        }
        _ = try? ImageInspector(maxPixels: 4_000_000, strictness: .lenient).validate(bytes, subject: "lenient")
        _ = try? ImageProcessor.process(bytes, ImageProcessing(width: 32), subject: "resize")
        // As the harness checks: the verdict is the same again after another input was judged.
        let first = Verdict(of: bytes, inspector: inspector)
        _ = Verdict(of: JPEGQuirk.named("bogus-dht-length")!.apply(to: Fixtures.thumbnailJPEG)!)
        #expect(Verdict(of: bytes, inspector: inspector) == first)
    }
}

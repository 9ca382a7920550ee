import Catalogue
import Foundation
import ImageCore
import Testing
import TestSupport
import TileCacheOrigin

@Suite("ImageInspector")
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

    @Test("zero bytes, wrong magic and GIF each fail with their reason")
    func wrongInputs() {
        #expect(reason { try inspector.validate([], subject: "empty") } == .notAnImage)
        #expect(reason { try inspector.validate([0, 1, 2, 3, 4, 5, 6, 7, 8], subject: "junk") } == .notAnImage)
        #expect(reason { try inspector.validate(Array("GIF89a\u{1}\u{0}\u{1}\u{0}".utf8), subject: "g") } == .unsupportedFormat)
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
@Suite("origin body forms")
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
@Suite("fuzz regressions")
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

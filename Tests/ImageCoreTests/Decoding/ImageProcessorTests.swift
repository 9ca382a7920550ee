import Foundation
import ImageCore
import Testing
import TestSupport
import TileCacheOrigin

/// The thumbnailer on real photos and PngSuite: orientation, geometry, resampling against Pillow's, alpha, formats.
@Suite("ImageProcessor", .timeLimit(.minutes(5)), .heavy)
struct ImageProcessorTests {
    static func photo(_ name: String) throws -> [UInt8] {
        try TestImages.bytes(try #require(try TestImages.photoFiles().first { $0.lastPathComponent == name }))
    }

    static func pngSuite(_ name: String) throws -> [UInt8] {
        try TestImages.bytes(TestImages.pngSuiteDirectory.appendingPathComponent(name))
    }

    static func pillowReference(_ name: String) throws -> DecodedImage {
        let url = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/pillow-lanczos/\(name).png")
        return try ImageInspector().validate([UInt8](try Data(contentsOf: url)), subject: name).image
    }

    /// PSNR in dB between two images of one size and layout.
    static func psnr(_ a: DecodedImage, _ b: DecodedImage) -> Double {
        precondition(a.width == b.width && a.height == b.height && a.pixelFormat == b.pixelFormat)
        let squared = zip(a.pixels, b.pixels).reduce(0.0) { sum, pair in
            let difference = Double(pair.0) - Double(pair.1)
            return sum + difference * difference
        }
        let mse = squared / Double(a.pixels.count)
        return mse == 0 ? 99 : 10 * log10(255 * 255 / mse)
    }

    static func decoded(_ made: ProcessedImage) throws -> DecodedImage {
        try ImageInspector().validate(made.bytes, subject: "output").image
    }

    /// A flat gray `width` x 100 image with a saturated red 30x30 square at `squareX` (rows 35-64): what draws attention.
    static func redSquare(width: Int, squareX: Int) -> ImageProcessor.Source {
        var pixels = [UInt8](repeating: 128, count: width * 100 * 3)
        for y in 35..<65 {
            for x in squareX..<squareX + 30 { pixels.replaceSubrange((y * width + x) * 3..<(y * width + x) * 3 + 3, with: [220, 20, 20]) }
        }
        return ImageProcessor.Source(image: DecodedImage(width: width, height: 100, pixelFormat: .rgb, pixels: pixels),
                                     header: ImageHeader(format: .png, width: width, height: 100, byteCount: 0))
    }

    /// The red pixels in the middle row of a variant made from `redSquare`.
    static func redsInMiddleRow(_ made: ProcessedImage) throws -> Int {
        let image = try ImageInspector().validate(made.bytes, subject: "out").image
        let row = image.height / 2
        return (0..<image.width).filter { x in
            image.pixels[(row * image.width + x) * 3] > 200 && image.pixels[(row * image.width + x) * 3 + 1] < 60
        }.count
    }

    @Test("against Pillow's LANCZOS of the same photo, lossless output is within a rounding error (full decode) or 1 dB of it (shrunk on load)",
          arguments: [("grace_hopper", 128, 45.0), ("hubble_deep_field", 256, 45.0), ("retina", 64, 36.0)])
    func matchesPillow(name: String, width: Int, minimum: Double) throws {
        let reference = try Self.pillowReference("\(name)-\(width)")
        let made = try ImageProcessor.process(try Self.photo("\(name).jpg"), ImageProcessing(width: width, format: .png), subject: name)
        #expect(made.width == reference.width && made.height == reference.height)
        let score = Self.psnr(try Self.decoded(made), reference)
        #expect(score >= minimum, "\(name) at \(width): \(score) dB")
    }

    /// Every test photo, and every damaged or quirky copy `JPEGQuirk` makes (cut short, flipped scan bytes, junk
    /// between segments, ...) of the smallest (grace_hopper.jpg, 512x600: the suite runs a debug build), named.
    static func photosAndQuirks() throws -> [(name: String, bytes: [UInt8])] {
        let photos = try TestImages.photoFiles().map { ($0.lastPathComponent, try TestImages.bytes($0)) }
        let smallest = try #require(photos.first { $0.0 == "grace_hopper.jpg" })
        return photos + JPEGQuirk.all.compactMap { quirk in quirk.apply(to: smallest.1).map { ("\(smallest.0) \(quirk.name)", $0) } }
    }

    @Test("a decode that is no verdict (libjpeg-turbo's fast Huffman path) gives the pixels the checking decode gives, damaged files too, at DCT scales 1/8 to 1",
          arguments: [8, 64, 128, 512])
    func trustedDecodeSamePixels(_ width: Int) throws {
        let lenient = ImageInspector(strictness: .lenient), processing = ImageProcessing(width: width, format: .png)
        var compared = 0
        for (name, bytes) in try Self.photosAndQuirks() {
            let checked = try? ImageProcessor.decode(bytes, for: processing, subject: name, inspector: lenient, checking: true)
            let trusted = try? ImageProcessor.decode(bytes, for: processing, subject: name)
            #expect((checked == nil) == (trusted == nil), "\(name) at \(width)")
            guard let checked, let trusted else { continue }
            compared += 1
            #expect(trusted.image.width == checked.image.width && trusted.image.pixels == checked.image.pixels, "\(name) at \(width)")
        }
        #expect(compared >= 15)
    }

    @Test("a download validated by a variant's decode (its DCT scale, colour-managed) gets validate's verdict and warnings, strict and lenient, damaged files too",
          arguments: [8, 64, 128, 512])
    func variantDecodeVerdict(_ width: Int) throws {
        let processing = ImageProcessing(width: width, format: .png)
        var failed = 0, passed = 0
        for strictness in [ImageInspector.Strictness.strict, .lenient] {
            let inspector = ImageInspector(strictness: strictness)
            for (name, bytes) in try Self.photosAndQuirks() {
                let validated = Result { () throws(ImageCoreError) in try inspector.validate(bytes, subject: name) }
                let decoded = Result { () throws(ImageCoreError) in
                    try ImageProcessor.decode(bytes, for: processing, subject: name, inspector: inspector, checking: true)
                }
                switch (validated, decoded) {
                case (.success(let full), .success(let scaled)):
                    passed += 1
                    #expect(scaled.header == full.header, "\(name) \(strictness) at \(width)")
                    #expect(scaled.warnings == full.warnings, "\(name) \(strictness) at \(width)")
                case (.failure(let full), .failure(let scaled)):
                    failed += 1
                    #expect(scaled.reason == full.reason && scaled.message == full.message, "\(name) \(strictness) at \(width)")
                default:
                    Issue.record("\(name) \(strictness) at \(width): validate \(validated), the variant's decode \(decoded)")
                }
            }
        }
        #expect(failed >= 5 && passed >= 20)
    }

    @Test("a JPEG variant not shrunk on load is made from the validation's pixels (a cold miss decodes once): the same bytes as from its own decode, damaged files too")
    func variantFromValidationPixels() throws {
        let inspector = ImageInspector(strictness: .lenient)
        var reused = 0
        for (name, bytes) in try Self.photosAndQuirks() {
            guard let header = try? inspector.inspectHeader(bytes, subject: name),
                  let validated = try? inspector.validate(bytes, subject: name) else { continue }
            // 64 px is a reduce of 8 or more for every photo: always its own decode, shrunk on load.
            #expect(ImageProcessor.makesVariantFromOwnDecode(bytes, header: header, for: ImageProcessing(width: 64)))
            for processing in [ImageProcessing(width: 256, format: .jpeg), ImageProcessing(width: 400, format: .webp), ImageProcessing(width: 300, height: 300, fit: .cover, format: .png)]
            where !ImageProcessor.makesVariantFromOwnDecode(bytes, header: header, for: processing) {
                reused += 1
                let fromPixels = try ImageProcessor.process(ImageProcessor.Source(image: validated.image, header: header), processing, subject: name)
                let fromBytes = try ImageProcessor.process(bytes, processing, subject: name)
                #expect(fromPixels.bytes == fromBytes.bytes, "\(name) \(processing)")
            }
        }
        #expect(reused >= 30)  // the photos but the Adobe RGB one, and the damaged copies, at most sizes
    }

    @Test("sample positions are centred: a symmetric picture stays symmetric at every scale")
    func centred() throws {
        // A white square centred on black, 99x99: every output must be its own mirror image.
        let size = 99
        let pixels = (0..<(size * size)).map { index -> UInt8 in
            let x = index % size, y = index / size
            return (30...68).contains(x) && (30...68).contains(y) ? 255 : 0
        }
        let source = ImageProcessor.Source(image: DecodedImage(width: size, height: size, pixelFormat: .gray, pixels: pixels),
                                           header: ImageHeader(format: .png, width: size, height: size, byteCount: 0))
        for width in [7, 10, 33, 50, 64] {
            let out = try ImageProcessor.process(source, ImageProcessing(width: width, format: .png), subject: "square").image
            for y in 0..<out.height {
                for x in 0..<out.width {
                    let mirrored = out.pixels[y * out.width + (out.width - 1 - x)]
                    let flipped = out.pixels[(out.height - 1 - y) * out.width + x]
                    #expect(abs(Int(out.pixels[y * out.width + x]) - Int(mirrored)) <= 1, "w=\(width) (\(x), \(y))")
                    #expect(abs(Int(out.pixels[y * out.width + x]) - Int(flipped)) <= 1, "w=\(width) (\(x), \(y))")
                }
            }
        }
    }

    @Test("no enlargement unless asked; inside, cover and fill boxes; the 4096 px and 16 MP bounds")
    func geometry() throws {
        let rocket = try Self.photo("rocket.jpg")  // 640x427
        func size(_ processing: ImageProcessing) throws -> (Int, Int) {
            let made = try ImageProcessor.process(rocket, processing, subject: "rocket")
            let header = try ImageInspector().inspectHeader(made.bytes, subject: "out")
            #expect(header.width == made.width && header.height == made.height)
            return (made.width, made.height)
        }
        #expect(try size(ImageProcessing(width: 1024)) == (640, 427))
        #expect(try size(ImageProcessing(width: 1024, enlarge: true)) == (1024, 683))
        #expect(try size(ImageProcessing(height: 100)) == (150, 100))
        #expect(try size(ImageProcessing(width: 100, height: 100)) == (100, 67))
        #expect(try size(ImageProcessing(width: 100, height: 100, fit: .cover)) == (100, 100))
        #expect(try size(ImageProcessing(width: 100, height: 100, fit: .fill)) == (100, 100))
        #expect(try size(ImageProcessing(width: 1000, height: 1000, fit: .cover)) == (427, 427))  // the crop, not enlarged
        // imgproxy's force without enlarge: the box's shape, shrunk until no side is enlarged (not each side capped alone).
        #expect(try size(ImageProcessing(width: 1000, height: 1000, fit: .fill)) == (427, 427))
        #expect(throws: ImageCoreError.self) {
            try ImageProcessor.process(rocket, ImageProcessing(width: 4096, height: 4096, fit: .fill, enlarge: true), subject: "big")
        }
        do {
            _ = try ImageProcessor.process(rocket, ImageProcessing(height: 4096, enlarge: true), subject: "tall")
            Issue.record("an output 6139 px wide was made")
        } catch {
            #expect(error.reason == .outputTooLarge && error.message.contains("6139x4096"))
        }
    }

    @Test("cover crops around the centre: the middle of the source stays in the middle")
    func coverCrop() throws {
        // Left third red, middle third green, right third blue, 300x100: a square cover keeps only the green middle.
        let pixels = (0..<(300 * 100)).flatMap { index -> [UInt8] in
            switch (index % 300) / 100 {
            case 0: [255, 0, 0]
            case 1: [0, 255, 0]
            default: [0, 0, 255]
            }
        }
        let source = ImageProcessor.Source(image: DecodedImage(width: 300, height: 100, pixelFormat: .rgb, pixels: pixels),
                                           header: ImageHeader(format: .png, width: 300, height: 100, byteCount: 0))
        let out = try ImageProcessor.process(source, ImageProcessing(width: 50, height: 50, fit: .cover, format: .png), subject: "bands").image
        #expect(out.width == 50 && out.height == 50)
        for x in 2..<48 {  // away from the edges, where Lanczos reaches across the crop
            let pixel = Array(out.pixels[(25 * 50 + x) * 3..<(25 * 50 + x) * 3 + 3])
            #expect(pixel[1] >= 250 && pixel[0] <= 5 && pixel[2] <= 5, "x=\(x): \(pixel)")
        }
    }

    /// `upright` stored as EXIF orientation `orientation` says a camera stores it (the EXIF 2.3 table: where row 0 and
    /// column 0 of the stored image lie in the upright picture), written independently of the code under test.
    static func stored(_ upright: DecodedImage, orientation: Int) -> DecodedImage {
        let (w, h) = (upright.width, upright.height)
        let transposed = orientation >= 5
        let (sw, sh) = transposed ? (h, w) : (w, h)
        var out = [UInt8](repeating: 0, count: upright.pixels.count)
        for y in 0..<sh {
            for x in 0..<sw {
                let (ux, uy): (Int, Int)
                switch orientation {
                case 1: (ux, uy) = (x, y)                  // row 0 top, column 0 left
                case 2: (ux, uy) = (w - 1 - x, y)          // row 0 top, column 0 right
                case 3: (ux, uy) = (w - 1 - x, h - 1 - y)  // row 0 bottom, column 0 right
                case 4: (ux, uy) = (x, h - 1 - y)          // row 0 bottom, column 0 left
                case 5: (ux, uy) = (y, x)                  // row 0 left, column 0 top
                case 6: (ux, uy) = (w - 1 - y, x)          // row 0 right, column 0 top
                case 7: (ux, uy) = (w - 1 - y, h - 1 - x)  // row 0 right, column 0 bottom
                default: (ux, uy) = (y, h - 1 - x)         // row 0 left, column 0 bottom
                }
                for c in 0..<3 { out[(y * sw + x) * 3 + c] = upright.pixels[(uy * w + ux) * 3 + c] }
            }
        }
        return DecodedImage(width: sw, height: sh, pixelFormat: .rgb, pixels: out)
    }

    @Test("all eight EXIF orientations come out upright, the header reports them and the upright size, the output has no EXIF",
          arguments: 1...8)
    func orientation(_ orientation: Int) throws {
        // One photo, 120x80 upright (not square, not symmetric), stored eight ways.
        let upright = try Self.decoded(try ImageProcessor.process(try Self.photo("rocket.jpg"), ImageProcessing(width: 120, format: .png), subject: "rocket"))
        let stored = Self.stored(upright, orientation: orientation)
        let jpeg = TestImages.withEXIF(try JPEGEncoder.encode(stored, quality: 95), orientation: orientation, bigEndian: orientation % 2 == 0)
        let header = try ImageInspector().inspectHeader(jpeg, subject: "exif")
        #expect(header.orientation == orientation)
        #expect(header.uprightWidth == 120 && header.uprightHeight == upright.height)
        #expect(header.width == stored.width)
        let made = try ImageProcessor.process(jpeg, ImageProcessing(width: 60, format: .png), subject: "exif")
        #expect(made.width == 60 && made.height == upright.height / 2)
        let reference = try ImageProcessor.process(ImageProcessor.Source(image: upright, header: ImageHeader(format: .png, width: 120, height: upright.height, byteCount: 0)),
                                                   ImageProcessing(width: 60, format: .png), subject: "upright")
        let score = Self.psnr(try Self.decoded(made), reference.image)
        #expect(score >= 30, "orientation \(orientation): \(score) dB against the upright picture")
        let asJPEG = try ImageProcessor.process(jpeg, ImageProcessing(width: 60), subject: "exif")
        #expect(try ImageInspector().inspectHeader(asJPEG.bytes, subject: "out").orientation == nil)
    }

    @Test("alpha is premultiplied while resampling: an opaque white shape on transparent black gets no dark fringe")
    func noDarkFringes() throws {
        let size = 64
        let pixels = (0..<(size * size)).flatMap { index -> [UInt8] in
            let x = index % size, y = index / size
            return abs(x - 32) < 20 && abs(y - 32) < 20 ? [255, 255, 255, 255] : [0, 0, 0, 0]
        }
        let source = ImageProcessor.Source(image: DecodedImage(width: size, height: size, pixelFormat: .rgba, pixels: pixels),
                                           header: ImageHeader(format: .png, width: size, height: size, byteCount: 0))
        for format in [ImageProcessing.OutputFormat.png, nil] {
            let made = try ImageProcessor.process(source, ImageProcessing(width: 13, format: format), subject: "shape")
            #expect(made.format == .png)  // the default for a source with alpha
            let out = try Self.decoded(made)
            #expect(out.pixelFormat == .rgba)
            var edges = 0
            for pixel in stride(from: 0, to: out.pixels.count, by: 4) where out.pixels[pixel + 3] > 0 {
                if out.pixels[pixel + 3] < 255 { edges += 1 }
                #expect(out.pixels[pixel] >= 250, "colour \(out.pixels[pixel]) at alpha \(out.pixels[pixel + 3])")
            }
            #expect(edges > 0)  // there are partly transparent edge pixels, and they are white
        }
    }

    @Test("PngSuite: gray, gray+alpha, 16-bit, palette with transparency and interlaced PNGs resize in every format",
          arguments: ["basn0g08.png", "basn4a08.png", "basn6a16.png", "basn2c16.png", "tbbn3p08.png", "basi3p08.png", "basn0g01.png"])
    func pngSuiteInputs(_ name: String) throws {
        let bytes = try Self.pngSuite(name)
        let source = try ImageInspector().validate(bytes, subject: name)
        let alpha = source.image.pixelFormat == .rgba || source.image.pixelFormat == .grayAlpha
        for format in ImageProcessing.OutputFormat.encodings {
            let made = try ImageProcessor.process(bytes, ImageProcessing(width: 16, format: format), subject: name)
            #expect(ImageFormat.sniff(made.bytes) == format.imageFormat, "\(name) as \(format)")
            #expect(made.width == 16 && made.height == 16)
            if format == .png {
                let out = try Self.decoded(made)
                #expect((out.pixelFormat == .rgba || out.pixelFormat == .grayAlpha) == alpha, "\(name): alpha kept in PNG")
            }
        }
        #expect(try ImageProcessor.process(bytes, ImageProcessing(width: 16), subject: name).format == (alpha ? .png : .jpeg))
    }

    @Test("quality and format: q changes JPEG and WebP size; WebP is smaller than JPEG at the same quality on a photo")
    func qualityAndFormat() throws {
        let photo = try Self.photo("china.jpg")
        func bytes(_ quality: Int, _ format: ImageProcessing.OutputFormat) throws -> Int {
            let made = try ImageProcessor.process(photo, ImageProcessing(width: 256, quality: quality, format: format), subject: "china")
            #expect(ImageFormat.sniff(made.bytes) == format.imageFormat)
            return made.bytes.count
        }
        #expect(try bytes(40, .jpeg) < bytes(82, .jpeg))
        #expect(try bytes(40, .webp) < bytes(82, .webp))
        #expect(try bytes(82, .webp) < bytes(82, .jpeg))
        #expect(ImageProcessing(width: 256, quality: 82) == ImageProcessing(width: 256))  // the default is one variant
    }

    @Test("smart gravity centres the crop on what draws attention: a saturated red square on a flat gray field, wherever it is")
    func smartCrop() throws {
        for squareX in [10, 150, 260] {
            let made = try ImageProcessor.process(Self.redSquare(width: 300, squareX: squareX),
                                                  ImageProcessing(width: 100, height: 100, fit: .cover, format: .png, gravity: .init(.smart)),
                                                  subject: "square")
            // The square's middle row holds its red, whole, inside the 100-pixel crop.
            let reds = try Self.redsInMiddleRow(made)
            #expect(reds >= 28, "square at \(squareX): \(reds) red pixels in the crop's middle row")
        }
        // A crop that cuts nothing needs no attention: the whole image, as the centre gravity gives it.
        let photo = try Self.photo("rocket.jpg")
        let whole = try ImageProcessor.process(photo, ImageProcessing(width: 320, format: .png, gravity: .init(.smart)), subject: "rocket")
        #expect(whole.bytes == (try ImageProcessor.process(photo, ImageProcessing(width: 320, format: .png), subject: "rocket").bytes))
    }

    @Test("thumbor's operations: flips mirror the output, fill() centres it on a canvas of the box, max_bytes() lowers the quality until it fits")
    func thumborOperations() throws {
        // A 4x2 image whose pixels are numbered, as PNG so nothing is lost.
        let pixels: [UInt8] = (0..<8).flatMap { index -> [UInt8] in [UInt8(index * 30), 0, 0] }
        let source = ImageProcessor.Source(image: DecodedImage(width: 4, height: 2, pixelFormat: .rgb, pixels: pixels),
                                           header: ImageHeader(format: .png, width: 4, height: 2, byteCount: 0))
        func reds(_ processing: ImageProcessing) throws -> [UInt8] {
            let made = try ImageProcessor.process(source, processing, subject: "grid")
            let image = try ImageInspector().validate(made.bytes, subject: "out").image
            return stride(from: 0, to: image.pixels.count, by: image.pixelFormat.bytesPerPixel).map { image.pixels[$0] }
        }
        var flip = ImageProcessing(format: .png)
        flip.cropRule = .thumbor
        flip.flipHorizontal = true
        #expect(try reds(flip) == [90, 60, 30, 0, 210, 180, 150, 120])
        flip.flipVertical = true
        #expect(try reds(flip) == [210, 180, 150, 120, 90, 60, 30, 0])
        // fit-in 8x4 (never enlarged: the image stays 4x2) with fill(white): the image centred on an 8x4 canvas.
        var fill = ImageProcessing(width: 8, height: 4, format: .png)
        fill.cropRule = .thumbor
        fill.canvas = .color(.white)
        let canvas = try reds(fill)
        #expect(canvas.count == 32 && canvas[8 + 2] == 0 && canvas[8 + 5] == 90 && canvas[0] == 255 && canvas[31] == 255)
        // max_bytes: a photo's JPEG squeezed under a third of its size; an impossible bound keeps the first encoding.
        let photo = try Self.photo("rocket.jpg")
        let plain = try ImageProcessor.process(photo, ImageProcessing(width: 320, quality: 85, format: .jpeg), subject: "rocket")
        var squeezed = ImageProcessing(width: 320, quality: 85, format: .jpeg)
        squeezed.maxBytes = plain.bytes.count / 3
        #expect(try ImageProcessor.process(photo, squeezed, subject: "rocket").bytes.count <= plain.bytes.count / 3)
        squeezed.maxBytes = 10
        #expect(try ImageProcessor.process(photo, squeezed, subject: "rocket").bytes == plain.bytes)
    }

    @Test("the output's bounds hold after a trim: a trim that would make an enlarged output beyond 4096 pixels is refused before any pixel is made")
    func trimKeepsBounds() throws {
        // 1000x1000 gray with one full-width red line: the trim leaves 1000x1, enlarged to a box 1000 high.
        var pixels = [UInt8](repeating: 128, count: 1000 * 1000 * 3)
        for x in 0..<1000 { pixels.replaceSubrange((500 * 1000 + x) * 3..<(500 * 1000 + x) * 3 + 3, with: [255, 0, 0]) }
        let source = ImageProcessor.Source(image: DecodedImage(width: 1000, height: 1000, pixelFormat: .rgb, pixels: pixels),
                                           header: ImageHeader(format: .png, width: 1000, height: 1000, byteCount: 0))
        var processing = ImageProcessing(height: 1000, fit: .cover, enlarge: true, format: .png)
        processing.cropRule = .thumbor
        processing.trim = .init()
        do {
            _ = try ImageProcessor.process(source, processing, subject: "line")
            Issue.record("a 1,000,000-pixel-wide output was made")
        } catch {
            #expect(error.reason == .outputTooLarge)
        }
    }

    @Test("imgproxy's crop with smart gravity (c:100:100:sm) takes the region around the point of attention")
    func smartRegionCrop() throws {
        var processing = ImageProcessing(format: .png)
        processing.regionCrop = .init(width: 100, height: 100, gravity: .init(.smart))
        let made = try ImageProcessor.process(Self.redSquare(width: 400, squareX: 50), processing, subject: "region")
        let reds = try Self.redsInMiddleRow(made)
        #expect(made.width == 100 && reds >= 28, "\(reds) red pixels in the region's middle row")
    }

    @Test("smart gravity inside a manual crop looks for attention in that region and places the crop in its coordinates")
    func smartWithinRegion() throws {
        // The red square at x 330-360; the manual crop keeps x 200-400; a 100x100 smart crop of it.
        for rule in [ImageProcessing.CropRule.imgproxy, .thumbor] {
            var processing = ImageProcessing(width: 100, height: 100, fit: .cover, format: .png, gravity: .init(.smart))
            processing.cropRule = rule
            processing.sourceCrop = .init(left: 200, top: 0, right: 400, bottom: 100)
            let reds = try Self.redsInMiddleRow(try ImageProcessor.process(Self.redSquare(width: 400, squareX: 330), processing, subject: "region"))
            #expect(reds >= 28, "\(rule): \(reds) red pixels in the crop's middle row")
        }
    }
}

import Foundation
import CImageOps
import CPNG
import CWebP

/// Makes variants of validated images, the way libvips' `thumbnail` does:
///
/// 1. **Shrink on load**: a JPEG is decoded straight to 1/2, 1/4 or 1/8 of its size by libjpeg's DCT scaling, leaving
///    a factor of three or more for the final reduce, so the filter still does the antialiasing (`shrinkOnLoad`).
/// 2. **Upright**: the EXIF orientation (1-8) is applied to the pixels; the output carries no EXIF, so it is upright
///    for every viewer.
/// 3. **Reduce**: Lanczos-3, widened by the scale factor, with centred sample positions, in the source's (non-linear)
///    colour space (as Pillow and libvips do by default), alpha premultiplied so transparent edges get no dark fringes
///    (`CImageOps`).
/// 4. **Colour**: an embedded ICC profile (a JPEG's APP2 chunks, a PNG's iCCP, an AVIF's colr: Adobe RGB, Display P3,
///    CMYK with Adobe's inverted samples) is converted to sRGB with Little CMS, relative colorimetric, as libvips'
///    thumbnailer does: RGB after the reduce, on the output's pixels, as libvips' thumbnail and imgproxy do (a
///    twenty-fifth of the pixels at a 5x reduce); CMYK before it. Without a profile, sRGB is assumed.
/// 5. **Encode**: JPEG (TurboJPEG, 4:2:0), PNG (libpng), WebP (libwebp) or AVIF (libavif, libaom) at the asked
///    quality. Alpha is kept in PNG, WebP and AVIF and composited over white for JPEG.
///
/// Thread-safety: stateless; callable from any thread.
public enum ImageProcessor {
    /// Pixels to make variants from: as decoded (possibly shrunk on load, in the stored orientation), with the
    /// source's header (full size, orientation).
    public struct Source: Sendable {
        /// The decoded pixels, before orientation.
        public var image: DecodedImage
        /// Format, full stored size and orientation of the source.
        public var header: ImageHeader
        /// What the decode found and forgave (with `decode(_:for:subject:inspector:checking:)`'s `checking`, the
        /// inspector's warnings for these bytes).
        public var warnings: [String]
        /// The ICC profile (not sRGB's) RGB or RGBA pixels are in: `process` converts them to sRGB after the reduce,
        /// on the output's pixels rather than the source's (as libvips' thumbnail and imgproxy do). Nil for sRGB.
        public var profile: [UInt8]?

        /// A source from pixels decoded at full size and the header that describes them.
        public init(image: DecodedImage, header: ImageHeader, warnings: [String] = [], profile: [UInt8]? = nil) {
            self.image = image
            self.header = header
            self.warnings = warnings
            self.profile = profile
        }
    }

    /// `bytes` decoded and processed as `processing` asks.
    ///
    /// - Throws: `.outputTooLarge` for an output beyond `ImageProcessing.maxSide` or `maxPixels`; the inspector's errors
    ///   for bytes that do not decode.
    public static func process(_ bytes: [UInt8], _ processing: ImageProcessing, subject: String,
                               inspector: ImageInspector = ImageInspector(strictness: .lenient)) throws(ImageCoreError) -> ProcessedImage {
        try process(decode(bytes, for: processing, subject: subject, inspector: inspector), processing, subject: subject)
    }

    /// The pixels of `bytes`, decoded for `processing`: a JPEG at the smallest DCT scale that leaves the reduce a
    /// factor of three or more, a PNG in full; the warnings the decode forgave in the source. Unless `checking`, the
    /// decode is for pixels, not a verdict (a variant of bytes validated when stored, a thumbnail): a JPEG is judged
    /// leniently and decoded on libjpeg-turbo's fast Huffman path (the same pixels). With `checking` it is the
    /// inspector's `check` of the bytes too, at its strictness, with the same errors and warnings (`inspect
    /// --placeholders` decodes each file once).
    ///
    /// - Throws: the inspector's errors for bytes that do not decode.
    public static func decode(_ bytes: [UInt8], for processing: ImageProcessing, subject: String,
                              inspector: ImageInspector = ImageInspector(strictness: .lenient),
                              checking: Bool = false) throws(ImageCoreError) -> Source {
        guard ImageFormat.sniff(bytes) == .jpeg else {
            let validated = try inspector.validate(bytes, subject: subject)
            let image = validated.image
            // A PNG's iCCP profile or an AVIF's colr profile, converted as a JPEG's is (gray PNGs are left as they are;
            // a profile that cannot be used is ignored).
            var pending: [UInt8]?
            if image.pixelFormat == .rgb || image.pixelFormat == .rgba,
               let profile = bytes.withUnsafeBytes({ iccProfile($0, format: validated.header.format) }), ColorProfile.needsConversion(profile),
               ColorProfile.Conversion.to(image.pixelFormat == .rgb ? TIO_PIXELS_RGB : TIO_PIXELS_RGBA, from: profile).converts {
                pending = profile
            }
            return Source(image: image, header: validated.header, warnings: validated.warnings, profile: pending)
        }
        return try bytes.withRawBytes { raw throws(ImageCoreError) in
            let decoded = try JPEGCodec.decode(raw, strict: checking && inspector.strictness == .strict, subject: subject, scaleNumerator: { width, height, orientation in
                shrinkOnLoad(processing, width: width, height: height, orientation: orientation)
            }, colorManaged: true, trusted: !checking, checking: checking) { width, height throws(ImageCoreError) in
                try inspector.checkDimensions(width, height, subject: subject)  // before any allocation
            }
            return Source(image: decoded.image, header: ImageHeader(
                format: .jpeg, width: decoded.fullWidth, height: decoded.fullHeight, byteCount: bytes.count, orientation: decoded.orientation),
                warnings: decoded.warnings, profile: decoded.profile)
        }
    }

    /// Whether a variant of `bytes` (whose header is `header`) made as `processing` asks is made from a decode of its
    /// own rather than from the pixels decoded to validate them (full size, as djpeg decodes): a JPEG shrunk on load,
    /// decoded at its DCT scale (`decode(_:for:subject:inspector:checking:)`) as it is when the variant is made later
    /// from cached bytes, so a variant's bytes depend only on its source's bytes and the options (its ETag names exactly
    /// those: a cold miss once gave 1,397 bytes and a warm one 1,398 under one ETag); and an image with an ICC profile
    /// to convert (`needsOwnDecode`). A JPEG decoded at full size for the variant has the validation's pixels, so a cold
    /// miss decodes it once (ImageProcessorTests compares the variants made both ways).
    public static func makesVariantFromOwnDecode(_ bytes: [UInt8], header: ImageHeader, for processing: ImageProcessing) -> Bool {
        if ImageFormat.sniff(bytes) == .jpeg,
           shrinkOnLoad(processing, width: header.width, height: header.height, orientation: header.orientation) != 8 {
            return true
        }
        return needsOwnDecode(bytes)
    }

    /// Whether pixels decoded for validation cannot stand in for `bytes` when making a variant: a JPEG or PNG with an
    /// ICC profile to convert (Adobe RGB, Display P3, CMYK) is decoded again, colour-managed. (Validation decodes as djpeg
    /// does; most profiles are sRGB's, and then its pixels are used as they are.)
    public static func needsOwnDecode(_ bytes: [UInt8]) -> Bool {
        switch ImageFormat.sniff(bytes) {
        case .jpeg: bytes.withUnsafeBytes { JPEGCodec.needsColorConversion($0) }
        case let format?: bytes.withUnsafeBytes { iccProfile($0, format: format) }.map(ColorProfile.needsConversion) ?? false
        case nil: false
        }
    }

    /// The ICC profile a PNG (iCCP) or an AVIF (colr) embeds; nil for other formats (a JPEG's is read by its decoder).
    static func iccProfile(_ bytes: UnsafeRawBufferPointer, format: ImageFormat) -> [UInt8]? {
        switch format {
        case .png: PNGCodec.iccProfile(bytes)
        case .avif: AVIFCodec.iccProfile(bytes)
        default: nil
        }
    }

    /// The numerator n of the DCT scale n/8 to decode a `width` x `height` JPEG at for `processing`: 1/2, 1/4 or 1/8
    /// of the size, the largest reduction that leaves the Lanczos reduce a factor of three or more. libvips leaves two;
    /// measured on the test photos against a full-size Lanczos (docs/benchmarks.md), two lost up to 0.8 dB of PSNR at
    /// 64 and 128 px, three loses at most 0.16 dB. The other n/8 scales of libjpeg-turbo lost up to 2 dB.
    static func shrinkOnLoad(_ processing: ImageProcessing, width: Int, height: Int, orientation: Int?) -> Int {
        guard processing.trim == nil else { return 8 }  // trim judges every source pixel, as thumbor does
        let transposed = (orientation ?? 1) >= 5
        let geometry = ProcessingGeometry(processing, sourceWidth: transposed ? height : width, sourceHeight: transposed ? width : height)
        let shrink = min(geometry.cropWidth / Double(geometry.width), geometry.cropHeight / Double(geometry.height))
        switch shrink {
        case 24...: return 1
        case 12...: return 2
        case 6...: return 4
        default: return 8
        }
    }

    /// `source` processed as `processing` asks: upright, cropped and resized, converted to sRGB, mirrored, put on a
    /// canvas, encoded (again at lower qualities, for `maxBytes`).
    ///
    /// - Throws: `.outputTooLarge` for an output beyond `ImageProcessing.maxSide` or `maxPixels`; `.processing` when an
    ///   encoder fails.
    public static func process(_ source: Source, _ processing: ImageProcessing, subject: String) throws(ImageCoreError) -> ProcessedImage {
        var processing = processing  // an imgproxy crop with smart gravity is given its focus point below
        let header = source.header
        var geometry = ProcessingGeometry(processing, sourceWidth: header.uprightWidth, sourceHeight: header.uprightHeight)
        /// The output's bounds, checked before any pixel is made, and again whenever the geometry is made anew (a trim
        /// or a smart crop can change the output's size).
        func checkOutputSize() throws(ImageCoreError) {
            let (outputWidth, outputHeight) = processing.canvas != nil ? (geometry.canvasWidth, geometry.canvasHeight)
                : processing.extend != nil ? (geometry.extendWidth, geometry.extendHeight) : (geometry.width, geometry.height)
            let (area, overflow) = outputWidth.multipliedReportingOverflow(by: outputHeight)
            guard outputWidth <= ImageProcessing.maxSide, outputHeight <= ImageProcessing.maxSide, !overflow,
                  area <= ImageProcessing.maxPixels else {
                throw ImageCoreError(.outputTooLarge, subject: subject, message: """
                    the output would be \(outputWidth)x\(outputHeight), above the limit of \(ImageProcessing.maxSide) pixels \
                    a side and \(ImageProcessing.maxPixels) pixels
                    """)
            }
        }
        try checkOutputSize()
        var image = source.image
        if let orientation = header.orientation, orientation != 1 { image = try image.oriented(orientation, subject: subject) }
        // The source's size from here on: the upright image's, or the trimmed region's (the trimmed pixels are then
        // the source; thumbor ignores a trim that would leave nothing).
        var (sourceWidth, sourceHeight) = (header.uprightWidth, header.uprightHeight)
        if let trim = processing.trim, image.width == sourceWidth, image.height == sourceHeight,
           let box = image.trimBox(fromBottomRight: trim.fromBottomRight, tolerance: trim.tolerance) {
            image = image.cropped(left: box.left, top: box.top, width: box.width, height: box.height)
            (sourceWidth, sourceHeight) = (box.width, box.height)
            geometry = ProcessingGeometry(processing, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
            try checkOutputSize()
        }
        if var region = processing.regionCrop, (region.gravity ?? processing.gravity).anchor == .smart {
            // imgproxy's crop with smart gravity: the region centred on the attention point of the whole image.
            let (width, height) = region.size(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
            region.gravity = .centre
            if width < sourceWidth || height < sourceHeight {
                let point = try Attention.point(of: image, cropWidth: Double(width) * Double(image.width) / Double(sourceWidth),
                                                cropHeight: Double(height) * Double(image.height) / Double(sourceHeight), subject: subject)
                region.gravity = .init(.focusPoint, x: point.x, y: point.y)
            }
            processing.regionCrop = region
            geometry = ProcessingGeometry(processing, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
            try checkOutputSize()
        }
        if processing.gravity.anchor == .smart {
            // The crop centred on the attention point, found in the upright pixels (a focus point from here on).
            var focused = processing
            focused.gravity = .centre
            // Within the region a crop before the resize leaves (thumbor's manual crop, imgproxy's crop), whose
            // fractions the focus point is then given in.
            let region = ProcessingGeometry.sourceRegion(processing, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
                ?? (0, 0, sourceWidth, sourceHeight)
            if geometry.cropWidth < Double(region.width) || geometry.cropHeight < Double(region.height) {
                let scaleX = Double(image.width) / Double(sourceWidth), scaleY = Double(image.height) / Double(sourceHeight)
                let left = min(image.width - 1, Int(Double(region.left) * scaleX)), top = min(image.height - 1, Int(Double(region.top) * scaleY))
                let pixels = image.cropped(left: left, top: top, width: max(1, min(image.width - left, Int((Double(region.width) * scaleX).rounded()))),
                                           height: max(1, min(image.height - top, Int((Double(region.height) * scaleY).rounded()))))
                let point = try Attention.point(of: pixels, cropWidth: geometry.cropWidth * scaleX, cropHeight: geometry.cropHeight * scaleY,
                                                subject: subject)
                focused.gravity = .init(.focusPoint, x: point.x, y: point.y)
            }
            geometry = ProcessingGeometry(focused, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
            try checkOutputSize()
        }
        let hasAlpha = image.pixelFormat == .rgba || image.pixelFormat == .grayAlpha
        let format = processing.format ?? ImageProcessing.defaultFormat(sourceHasAlpha: hasAlpha)
        // JPEG has no alpha: flattened over white before the resize; with imgproxy's background or extend, at the end
        // (over the background, in every format when one is given), so the extended area is flattened too.
        let flattensLate = processing.background != nil || processing.extend != nil
        if format == .jpeg, !flattensLate { image = image.flattened(over: .white) }
        // The decode may be shrunk on load: the crop, in upright source pixels, scaled to the decoded size.
        let scaleX = Double(image.width) / Double(sourceWidth), scaleY = Double(image.height) / Double(sourceHeight)
        var resized = try image.resampled(
            x0: geometry.cropX * scaleX, y0: geometry.cropY * scaleY,
            x1: min(Double(image.width), (geometry.cropX + geometry.cropWidth) * scaleX),
            y1: min(Double(image.height), (geometry.cropY + geometry.cropHeight) * scaleY),
            width: geometry.width, height: geometry.height, subject: subject)
        // Colour: the source's profile to sRGB, on the reduced pixels, before anything is painted on them.
        if let profile = source.profile, resized.pixelFormat == .rgb || resized.pixelFormat == .rgba,
           case .converted(let pixels) = ColorProfile.toSRGB(resized.pixels, layout: resized.pixelFormat == .rgb ? TIO_PIXELS_RGB : TIO_PIXELS_RGBA,
                                                             profile: profile) {
            resized = DecodedImage(width: resized.width, height: resized.height, pixelFormat: resized.pixelFormat, pixels: pixels)
        }
        // thumbor's order: flips after the resize, then its filters (fill).
        if processing.flipHorizontal || processing.flipVertical {
            resized = resized.flipped(horizontally: processing.flipHorizontal, vertically: processing.flipVertical)
        }
        if let canvas = processing.canvas {
            let (left, top) = ((geometry.canvasWidth - resized.width) / 2, (geometry.canvasHeight - resized.height) / 2)
            switch canvas {
            case .color(let color):
                resized = resized.placed(onCanvasOf: color, width: geometry.canvasWidth, height: geometry.canvasHeight, left: left, top: top,
                                         showingThroughTransparency: processing.canvasUnderTransparency)
            case .meanColor:
                resized = resized.placed(onCanvasOf: resized.meanColor, width: geometry.canvasWidth, height: geometry.canvasHeight,
                                         left: left, top: top, showingThroughTransparency: processing.canvasUnderTransparency)
            case .blurredImage:
                let background = try resized.expandedToRGBA().blurred(sigma: 50, radius: 50)
                    .resampled(x0: 0, y0: 0, x1: Double(resized.width), y1: Double(resized.height),
                               width: geometry.canvasWidth, height: geometry.canvasHeight, subject: subject)
                resized = resized.pasted(on: background, left: left, top: top, showingThroughTransparency: processing.canvasUnderTransparency)
            }
        }
        if processing.extend != nil, geometry.extendWidth > resized.width || geometry.extendHeight > resized.height {
            resized = resized.placed(onCanvasOf: .transparent, width: geometry.extendWidth, height: geometry.extendHeight,
                                     left: geometry.extendLeft, top: geometry.extendTop, showingThroughTransparency: false)
        }
        if flattensLate, format == .jpeg || processing.background != nil {
            resized = resized.flattened(over: processing.background ?? .white)
        }
        func encode(quality: Int) throws(ImageCoreError) -> [UInt8] {
            switch format {
            case .jpeg: try JPEGCodec.encode(resized, quality: quality)
            case .png: try PNGEncoder.encode(resized, subject: subject)
            case .webp: try WebPEncoder.encode(resized, quality: quality, subject: subject)
            case .avif: try AVIFCodec.encode(resized, quality: quality, subject: subject)
            case .placeholder: try ImagePlaceholder(of: resized, subject: subject).json
            }
        }
        var bytes = try encode(quality: processing.effectiveQuality)
        if let maxBytes = processing.maxBytes, format == .jpeg || format == .webp, bytes.count > maxBytes {
            // thumbor's reload_to_fit_in_kb: 75% of the quality at a time; below 10, the first encoding stays.
            var quality = processing.effectiveQuality
            while true {
                quality = Int(Double(quality) * 0.75)
                guard quality >= 10 else { break }
                let smaller = try encode(quality: quality)
                if smaller.count <= maxBytes { bytes = smaller; break }
            }
        }
        return ProcessedImage(bytes: bytes, image: resized, format: format.imageFormat)
    }
}

/// A variant: its encoded bytes, their format, and the pixels they encode.
public struct ProcessedImage: Sendable {
    /// The encoded bytes.
    public var bytes: [UInt8]
    /// The pixels the bytes encode.
    public var image: DecodedImage
    /// The format of `bytes`.
    public var format: ImageFormat
    /// Width in pixels.
    public var width: Int { image.width }
    /// Height in pixels.
    public var height: Int { image.height }
}

/// PNG output through libpng's simplified write API (its longjmp stays inside libpng).
enum PNGEncoder {
    static func encode(_ image: DecodedImage, subject: String) throws(ImageCoreError) -> [UInt8] {
        var png = png_image()
        png.version = UInt32(PNG_IMAGE_VERSION)
        png.width = UInt32(image.width)
        png.height = UInt32(image.height)
        switch image.pixelFormat {
        case .gray: png.format = 0
        case .grayAlpha: png.format = UInt32(PNG_FORMAT_FLAG_ALPHA)
        case .rgb: png.format = UInt32(PNG_FORMAT_FLAG_COLOR)
        case .rgba: png.format = UInt32(PNG_FORMAT_FLAG_COLOR) | UInt32(PNG_FORMAT_FLAG_ALPHA)
        }
        defer { png_image_free(&png) }
        // One pass into a buffer of libpng's bound on the stream (PNG_IMAGE_PNG_SIZE_MAX), as libpng's manual suggests:
        // asking for the size first (a null buffer) compresses the whole image once more, which was half of every PNG
        // encode. The pages the stream does not reach are never touched; the stream is copied out at its size.
        let capacity = tc_png_image_png_size_max(&png)
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 1)
        defer { memory.deallocate() }
        var size = capacity
        let written = image.pixels.withUnsafeBytes { pixels in
            png_image_write_to_memory(&png, memory.baseAddress, &size, 0, pixels.baseAddress, 0, nil)
        }
        guard written != 0, size > 0, size <= capacity else { throw failure(&png, subject: subject) }
        return Array(UnsafeRawBufferPointer(rebasing: memory[..<size]))
    }

    private static func failure(_ png: inout png_image, subject: String) -> ImageCoreError {
        let message = withUnsafeBytes(of: &png.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return ImageCoreError(.processing, subject: subject, message: "PNG encode failed: \(message)")
    }
}

/// WebP output through libwebp's simple API (lossy, at the asked quality; alpha kept).
enum WebPEncoder {
    static func encode(_ image: DecodedImage, quality: Int, subject: String) throws(ImageCoreError) -> [UInt8] {
        let color = image.expandedToColor()
        var output: UnsafeMutablePointer<UInt8>?
        let size = color.pixels.withUnsafeBufferPointer { pixels in
            color.pixelFormat == .rgba
                ? WebPEncodeRGBA(pixels.baseAddress, Int32(color.width), Int32(color.height), Int32(color.bytesPerRow), Float(quality), &output)
                : WebPEncodeRGB(pixels.baseAddress, Int32(color.width), Int32(color.height), Int32(color.bytesPerRow), Float(quality), &output)
        }
        defer { if let output { WebPFree(output) } }
        guard size > 0, let output else {
            throw ImageCoreError(.processing, subject: subject, message: "WebP encode failed for a \(image.width)x\(image.height) image")
        }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }
}

extension DecodedImage {
    /// thumbor's `_bounding_box`: the smallest box holding every pixel farther than `tolerance` (Euclidean distance
    /// over the channels, alpha included) from the top-left or bottom-right pixel, scanned as thumbor scans it (each
    /// row from the left to its first such pixel, then from the right down to the box's right edge so far); nil when
    /// no pixel is.
    func trimBox(fromBottomRight: Bool, tolerance: Int) -> (left: Int, top: Int, width: Int, height: Int)? {
        let color = expandedToColor()  // thumbor measures in RGB(A): a gray image's distances as its RGB's
        let pixels = color.pixels
        let stride = color.pixelFormat.bytesPerPixel
        let reference = fromBottomRight ? (width * height - 1) * stride : 0
        func differs(_ x: Int, _ y: Int) -> Bool {
            let at = (y * width + x) * stride
            var sum = 0
            for channel in 0..<stride {
                let difference = Int(pixels[at + channel]) - Int(pixels[reference + channel])
                sum += difference * difference
            }
            return Double(sum).squareRoot() > Double(tolerance)
        }
        var (left, top, right, bottom) = (width, height, 0, 0)
        for y in 0..<height {
            var x = 0
            while x < width, !differs(x, y) { x += 1 }
            if x < width {
                (left, top, bottom) = (min(left, x), min(top, y), y)
            }
            var xi = width - 1
            while xi > max(x, right) {
                if differs(xi, y) { right = max(right, xi); break }
                xi -= 1
            }
        }
        guard right >= left, bottom >= top else { return nil }
        return (left, top, right + 1 - left, bottom + 1 - top)
    }

    /// The region of the image at (`left`, `top`), `width` x `height`.
    func cropped(left: Int, top: Int, width newWidth: Int, height newHeight: Int) -> DecodedImage {
        let stride = pixelFormat.bytesPerPixel
        var out = [UInt8]()
        out.reserveCapacity(newWidth * newHeight * stride)
        for y in top..<top + newHeight {
            out += pixels[((y * width) + left) * stride..<((y * width) + left + newWidth) * stride]
        }
        return DecodedImage(width: newWidth, height: newHeight, pixelFormat: pixelFormat, pixels: out)
    }

    /// The image mirrored left to right and/or top to bottom.
    func flipped(horizontally: Bool, vertically: Bool) -> DecodedImage {
        let channels = pixelFormat.bytesPerPixel
        var out = [UInt8](repeating: 0, count: pixels.count)
        for y in 0..<height {
            let sourceRow = vertically ? height - 1 - y : y
            for x in 0..<width {
                let sourceColumn = horizontally ? width - 1 - x : x
                let from = (sourceRow * width + sourceColumn) * channels, to = (y * width + x) * channels
                for channel in 0..<channels { out[to + channel] = pixels[from + channel] }
            }
        }
        return DecodedImage(width: width, height: height, pixelFormat: pixelFormat, pixels: out)
    }

    /// The image pasted at (`left`, `top`) on a `width` x `height` canvas of `color` (thumbor's `fill()`, imgproxy's
    /// `extend`). Where the image is transparent, the canvas shows through only with `showingThroughTransparency`
    /// (thumbor's `merge`); otherwise the image's pixels replace the canvas's. RGB when the result is opaque.
    func placed(onCanvasOf color: ImageProcessing.Color, width canvasWidth: Int, height canvasHeight: Int, left: Int, top: Int,
                showingThroughTransparency: Bool) -> DecodedImage {
        var canvas = [UInt8](repeating: 0, count: canvasWidth * canvasHeight * 4)
        canvas.withUnsafeMutableBufferPointer { buffer in
            for at in Swift.stride(from: 0, to: buffer.count, by: 4) {
                (buffer[at], buffer[at + 1], buffer[at + 2], buffer[at + 3]) = (color.red, color.green, color.blue, color.alpha)
            }
        }
        return pasted(on: DecodedImage(width: canvasWidth, height: canvasHeight, pixelFormat: .rgba, pixels: canvas),
                      left: left, top: top, showingThroughTransparency: showingThroughTransparency)
    }

    /// The image pasted at (`left`, `top`) on `background` (RGBA), as `placed(onCanvasOf:...)` pastes it.
    func pasted(on background: DecodedImage, left: Int, top: Int, showingThroughTransparency: Bool) -> DecodedImage {
        let image = expandedToColor()
        let channels = image.pixelFormat.bytesPerPixel
        let (canvasWidth, canvasHeight) = (background.width, background.height)
        var canvas = background.expandedToRGBA().pixels
        for y in 0..<height where top + y >= 0 && top + y < canvasHeight {
            for x in 0..<width where left + x >= 0 && left + x < canvasWidth {
                let from = (y * width + x) * channels, to = ((top + y) * canvasWidth + left + x) * 4
                let alpha = channels == 4 ? Int(image.pixels[from + 3]) : 255
                if showingThroughTransparency, alpha < 255 {
                    // "over": the image's colour weighted by its alpha, the canvas's by the rest.
                    let below = Int(canvas[to + 3]), outAlpha = alpha + below * (255 - alpha) / 255
                    for channel in 0..<3 {
                        let value = Int(image.pixels[from + channel]) * alpha + Int(canvas[to + channel]) * below * (255 - alpha) / 255
                        canvas[to + channel] = outAlpha == 0 ? 0 : UInt8(min(255, (value + outAlpha / 2) / outAlpha))
                    }
                    canvas[to + 3] = UInt8(outAlpha)
                } else {
                    for channel in 0..<3 { canvas[to + channel] = image.pixels[from + channel] }
                    canvas[to + 3] = UInt8(alpha)
                }
            }
        }
        return DecodedImage.fromRGBA(width: canvasWidth, height: canvasHeight, pixels: canvas)
    }

    /// thumbor's `fill(auto)` colour: the mean red, green and blue over every pixel (integer division), opaque.
    var meanColor: ImageProcessing.Color {
        let image = expandedToColor()
        let stride = image.pixelFormat.bytesPerPixel
        var sums = [0, 0, 0]
        for at in Swift.stride(from: 0, to: image.pixels.count, by: stride) {
            for channel in 0..<3 { sums[channel] += Int(image.pixels[at + channel]) }
        }
        let count = max(1, width * height)
        return ImageProcessing.Color(red: UInt8(sums[0] / count), green: UInt8(sums[1] / count), blue: UInt8(sums[2] / count))
    }

    /// RGBA: colour and gray images given an opaque alpha channel.
    func expandedToRGBA() -> DecodedImage {
        let color = expandedToColor()
        guard color.pixelFormat == .rgb else { return color }
        var out = [UInt8](repeating: 255, count: width * height * 4)
        for pixel in 0..<(width * height) {
            out[pixel * 4] = color.pixels[pixel * 3]
            out[pixel * 4 + 1] = color.pixels[pixel * 3 + 1]
            out[pixel * 4 + 2] = color.pixels[pixel * 3 + 2]
        }
        return DecodedImage(width: width, height: height, pixelFormat: .rgba, pixels: out)
    }

    /// thumbor's blur (`filters/blur.py` and `_convolution.c`): a Gaussian of `2 x radius + 1` taps, normalised, run
    /// across then down, each pass's sums truncated to whole values, edge pixels repeated; every channel (RGBA).
    func blurred(sigma: Double, radius: Int) -> DecodedImage {
        let taps = (-radius...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = taps.reduce(0, +)
        let kernel = taps.map { $0 / total }
        let channels = pixelFormat.bytesPerPixel
        let (width, height) = (self.width, self.height)
        func pass(_ input: [UInt8], horizontal: Bool) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: input.count)
            input.withUnsafeBufferPointer { source in
                out.withUnsafeMutableBufferPointer { target in
                    var sums = [Double](repeating: 0, count: channels)
                    for y in 0..<height {
                        for x in 0..<width {
                            for channel in 0..<channels { sums[channel] = 0 }
                            for (index, weight) in kernel.enumerated() {
                                let offset = index - radius
                                let sx = horizontal ? min(max(x + offset, 0), width - 1) : x
                                let sy = horizontal ? y : min(max(y + offset, 0), height - 1)
                                let at = (sy * width + sx) * channels
                                for channel in 0..<channels { sums[channel] += Double(source[at + channel]) * weight }
                            }
                            let at = (y * width + x) * channels
                            for channel in 0..<channels { target[at + channel] = UInt8(min(255, max(0, Int(sums[channel])))) }
                        }
                    }
                }
            }
            return out
        }
        return DecodedImage(width: width, height: height, pixelFormat: pixelFormat, pixels: pass(pass(pixels, horizontal: true), horizontal: false))
    }

    /// Gray or RGB: alpha composited over `color` (a gray image over a colour that is not gray becomes RGB).
    func flattened(over color: ImageProcessing.Color) -> DecodedImage {
        switch pixelFormat {
        case .gray, .rgb: return self
        case .grayAlpha where color.red != color.green || color.green != color.blue:
            return expandedToColor().flattened(over: color)
        case .grayAlpha, .rgba:
            let channels = pixelFormat == .rgba ? 3 : 1
            let background = [Int(color.red), Int(color.green), Int(color.blue)]
            let stride = pixelFormat.bytesPerPixel
            var out = [UInt8](repeating: 0, count: width * height * channels)
            for pixel in 0..<(width * height) {
                let alpha = Int(pixels[pixel * stride + stride - 1])
                for channel in 0..<channels {
                    let value = Int(pixels[pixel * stride + channel])
                    out[pixel * channels + channel] = UInt8((value * alpha + background[channel] * (255 - alpha) + 127) / 255)
                }
            }
            return DecodedImage(width: width, height: height, pixelFormat: channels == 3 ? .rgb : .gray, pixels: out)
        }
    }

    /// RGB or RGBA: gray copied into each colour channel.
    func expandedToColor() -> DecodedImage {
        switch pixelFormat {
        case .rgb, .rgba: return self
        case .gray:
            return DecodedImage(width: width, height: height, pixelFormat: .rgb, pixels: pixels.flatMap { [$0, $0, $0] })
        case .grayAlpha:
            var out = [UInt8](); out.reserveCapacity(width * height * 4)
            for index in Swift.stride(from: 0, to: pixels.count, by: 2) {
                out += [pixels[index], pixels[index], pixels[index], pixels[index + 1]]
            }
            return DecodedImage(width: width, height: height, pixelFormat: .rgba, pixels: out)
        }
    }

    /// The image turned upright from EXIF orientation `orientation` (1-8).
    func oriented(_ orientation: Int, subject: String) throws(ImageCoreError) -> DecodedImage {
        let transposed = orientation >= 5
        var out = [UInt8](repeating: 0, count: pixels.count)
        let status = pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                tio_orient(source.baseAddress, Int32(width), Int32(height), Int32(pixelFormat.bytesPerPixel), Int32(orientation), target.baseAddress)
            }
        }
        guard status == 0 else {
            throw ImageCoreError(.processing, subject: subject, message: "EXIF orientation \(orientation) could not be applied")
        }
        return DecodedImage(width: transposed ? height : width, height: transposed ? width : height, pixelFormat: pixelFormat, pixels: out)
    }

    /// The region (x0, y0)-(x1, y1) resampled to `width` x `height` with Lanczos-3, alpha premultiplied meanwhile.
    func resampled(x0: Double, y0: Double, x1: Double, y1: Double, width newWidth: Int, height newHeight: Int,
                   subject: String) throws(ImageCoreError) -> DecodedImage {
        let channels = pixelFormat.bytesPerPixel
        let hasAlpha = pixelFormat == .rgba || pixelFormat == .grayAlpha
        var input = pixels
        if hasAlpha { input.withUnsafeMutableBufferPointer { tio_premultiply($0.baseAddress, width * height, Int32(channels)) } }
        var out = [UInt8](repeating: 0, count: newWidth * newHeight * channels)
        let status = input.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                tio_resample_lanczos3(source.baseAddress, Int32(width), Int32(height), Int32(channels), x0, y0, x1, y1,
                                      target.baseAddress, Int32(newWidth), Int32(newHeight))
            }
        }
        guard status == 0 else {
            let why = status == -2 ? "out of memory" : "invalid region (\(x0), \(y0))-(\(x1), \(y1)) of \(width)x\(height)"
            throw ImageCoreError(.processing, subject: subject, message: "resampling to \(newWidth)x\(newHeight) failed: \(why)")
        }
        if hasAlpha { out.withUnsafeMutableBufferPointer { tio_unpremultiply($0.baseAddress, newWidth * newHeight, Int32(channels)) } }
        return DecodedImage(width: newWidth, height: newHeight, pixelFormat: pixelFormat, pixels: out)
    }
}

import CAVIF

/// AVIF through libavif (Debian's 0.11, loaded on first use: `AVIFLibrary`; dav1d decodes, libaom encodes): the header by `avifDecoderParse` (the
/// container's boxes, no AV1 decoding), every frame by `avifDecoderNextImage`, YUV to 8-bit RGB(A) by libavif, and
/// encoding of variants.
///
/// Verdicts: data that ends before a box or an item's extent ends is `.truncated`; boxes libavif cannot parse, AV1
/// data the decoder refuses, and an alpha plane of another size are `.corrupt`; an AVIF with no AV1 image or a feature
/// libavif does not decode is `.unsupportedFormat`. Strict parsing (libavif's default, `AVIF_STRICT_ENABLED`) is kept:
/// a file a strict reader refuses is refused. The rotation and mirroring boxes (`irot`, `imir`) become the EXIF
/// orientation they mean, so variants come out upright as a JPEG's do.
/// Thread-safety: stateless; each call has its own decoder or encoder, single-threaded.
enum AVIFCodec {
    /// What the container says.
    struct Features {
        var width: Int
        var height: Int
        var hasAlpha: Bool
        var frames: Int
        /// The EXIF orientation `irot` and `imir` amount to; nil when the file has neither.
        var orientation: Int?
    }

    /// An image sequence's frames together may hold at most this many times `maxPixels` (as `WebPCodec`'s).
    static let animationWorkFactor = WebPCodec.animationWorkFactor

    /// Size, alpha, frame count and orientation from the container (`avifDecoderParse`): no AV1 data is decoded.
    static func readFeatures(_ bytes: UnsafeRawBufferPointer, subject: String, maxPixels: Int) throws(ImageCoreError) -> Features {
        try withParsedDecoder(bytes, subject: subject, maxPixels: maxPixels) { decoder, _ throws(ImageCoreError) in features(of: decoder) }
    }

    /// The ICC profile the container carries (its `colr` box of type `prof`), nil when it has none or does not parse.
    static func iccProfile(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        try? withParsedDecoder(bytes, subject: "", maxPixels: Int(UInt32.max)) { decoder, _ in
            let icc = decoder.pointee.image.pointee.icc
            guard icc.size > 0, let data = icc.data else { return nil }
            return Array(UnsafeBufferPointer(start: data, count: icc.size))
        }
    }

    /// Decodes every frame after `checkDimensions` accepted the container's size; the first frame's pixels, RGBA when
    /// the image has alpha, RGB otherwise.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, subject: String, maxPixels: Int,
        checkDimensions: (Int, Int) throws(ImageCoreError) -> Void
    ) throws(ImageCoreError) -> (DecodedImage, features: Features, warnings: [String]) {
        try withParsedDecoder(bytes, subject: subject, maxPixels: maxPixels) { decoder, library throws(ImageCoreError) in
            let features = features(of: decoder)
            try checkDimensions(features.width, features.height)
            let (work, overflow) = (features.width * features.height).multipliedReportingOverflow(by: features.frames)
            let workLimit = maxPixels.multipliedReportingOverflow(by: animationWorkFactor)
            guard !overflow, workLimit.overflow || work <= workLimit.partialValue else {
                throw ImageCoreError(.dimensions, subject: subject, message: """
                    AVIF sequence of \(features.frames) frames of \(features.width)x\(features.height): more pixels to decode than \
                    \(animationWorkFactor) x \(maxPixels)
                    """)
            }
            var first: DecodedImage?
            var decoded = 0
            while true {
                let result = library.decoderNextImage(decoder)
                if result == AVIF_RESULT_NO_IMAGES_REMAINING { break }
                guard result == AVIF_RESULT_OK else {
                    throw error(result, subject: subject, stage: "AVIF frame \(decoded + 1) of \(features.frames) does not decode", decoder: decoder,
                                bytes: bytes)
                }
                if first == nil { first = try rgb(of: decoder.pointee.image, alpha: features.hasAlpha, library: library, subject: subject) }
                decoded += 1
            }
            guard let first, decoded == features.frames else {
                throw ImageCoreError(.corrupt, subject: subject, message: "AVIF declares \(features.frames) frame(s) but \(decoded) decoded")
            }
            guard first.width == features.width, first.height == features.height else {
                throw ImageCoreError(.corrupt, subject: subject, message: """
                    AVIF's container says \(features.width)x\(features.height) but its AV1 data decodes to \(first.width)x\(first.height)
                    """)
            }
            var warnings: [String] = []
            if features.frames > 1 {
                warnings.append("AVIF sequence (\(features.frames) frames): every frame decodes; the first frame's pixels are used")
            }
            if decoder.pointee.image.pointee.transformFlags & AVIF_TRANSFORM_CLAP.rawValue != 0 {
                warnings.append("AVIF clean aperture (clap) ignored: the whole coded image is used")
            }
            return (first, features, warnings)
        }
    }

    /// The AVIF of `image`: 4:2:0, sRGB signalled (BT.709 primaries, sRGB transfer, BT.601 matrix, full range, as
    /// avifenc writes a PNG), both quantizers from `quality` as libavif 1.x maps its quality (100: lossless quantizer 0;
    /// 0: the worst, 63), libaom at speed 9 on one thread (imgproxy's default speed).
    static func encode(_ image: DecodedImage, quality: Int, subject: String) throws(ImageCoreError) -> [UInt8] {
        var color = image.expandedToColor()
        let hasAlpha = color.pixelFormat == .rgba
        let library = try AVIFLibrary.get(subject: subject)
        guard let avif = library.imageCreate(UInt32(color.width), UInt32(color.height), 8, AVIF_PIXEL_FORMAT_YUV420) else {
            throw ImageCoreError(.processing, subject: subject, message: "AVIF encode failed: libavif could not make an image")
        }
        defer { library.imageDestroy(avif) }
        avif.pointee.colorPrimaries = UInt16(AVIF_COLOR_PRIMARIES_BT709)
        avif.pointee.transferCharacteristics = UInt16(AVIF_TRANSFER_CHARACTERISTICS_SRGB)
        avif.pointee.matrixCoefficients = UInt16(AVIF_MATRIX_COEFFICIENTS_BT601)
        avif.pointee.yuvRange = AVIF_RANGE_FULL
        var rgb = avifRGBImage()
        library.rgbImageSetDefaults(&rgb, avif)
        rgb.depth = 8
        rgb.format = hasAlpha ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB
        rgb.rowBytes = UInt32(color.bytesPerRow)
        var pixels = color.pixels
        color = DecodedImage(width: 1, height: 1, pixelFormat: .gray, pixels: [0])  // the copy above is the only one
        let converted = pixels.withUnsafeMutableBufferPointer { buffer in
            rgb.pixels = buffer.baseAddress
            defer { rgb.pixels = nil }
            return library.imageRGBToYUV(avif, &rgb)
        }
        guard converted == AVIF_RESULT_OK else { throw encodeError(converted, subject: subject, stage: "RGB to YUV") }
        guard let encoder = library.encoderCreate() else {
            throw ImageCoreError(.processing, subject: subject, message: "AVIF encode failed: libavif could not make an encoder")
        }
        defer { library.encoderDestroy(encoder) }
        let quantizer = Int32(((100 - max(0, min(100, quality))) * 63 + 50) / 100)
        encoder.pointee.maxThreads = 1
        encoder.pointee.speed = 9
        encoder.pointee.minQuantizer = quantizer
        encoder.pointee.maxQuantizer = quantizer
        encoder.pointee.minQuantizerAlpha = quantizer
        encoder.pointee.maxQuantizerAlpha = quantizer
        var output = avifRWData(data: nil, size: 0)
        defer { library.rwDataFree(&output) }
        let written = library.encoderWrite(encoder, avif, &output)
        guard written == AVIF_RESULT_OK, output.size > 0, let data = output.data else {
            throw encodeError(written, subject: subject, stage: "\(image.width)x\(image.height)")
        }
        return Array(UnsafeBufferPointer(start: data, count: output.size))
    }

    // MARK: - Internals

    /// Runs `body` with a decoder that has parsed `bytes`' container: one thread, Exif and XMP not read. A file that ends
    /// inside one of its top-level boxes, or before the end of an item `iloc` places, is `.truncated` before libavif
    /// sees it (the primary image may not need the missing part, and libavif 0.11 would not notice). The container's
    /// size is judged by the caller (`.dimensions`, not libavif's parse error); after the parse, frames above `maxPixels`
    /// are refused by the AV1 decoder too (dav1d's frame size limit), whatever the container said.
    private static func withParsedDecoder<T>(
        _ bytes: UnsafeRawBufferPointer, subject: String, maxPixels: Int,
        _ body: (UnsafeMutablePointer<avifDecoder>, AVIFLibrary) throws(ImageCoreError) -> T
    ) throws(ImageCoreError) -> T {
        if endsInsideABox(bytes) {
            throw ImageCoreError(.truncated, subject: subject, message: "AVIF ends early: the file ends inside one of its boxes")
        }
        if let end = itemsEnd(bytes), end > bytes.count {
            throw ImageCoreError(.truncated, subject: subject, message: """
                AVIF ends early: its item locations (iloc) reach byte \(end), the file holds \(bytes.count)
                """)
        }
        let library = try AVIFLibrary.get(subject: subject)
        guard let decoder = library.decoderCreate() else {
            throw ImageCoreError(.io, subject: subject, message: "libavif could not make a decoder (out of memory)")
        }
        defer { library.decoderDestroy(decoder) }
        decoder.pointee.maxThreads = 1
        decoder.pointee.ignoreExif = AVIF_TRUE
        decoder.pointee.ignoreXMP = AVIF_TRUE
        let set = library.decoderSetIOMemory(decoder, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
        guard set == AVIF_RESULT_OK else { throw error(set, subject: subject, stage: "AVIF unreadable", decoder: decoder, bytes: bytes) }
        let parsed = library.decoderParse(decoder)
        guard parsed == AVIF_RESULT_OK else { throw error(parsed, subject: subject, stage: "AVIF header unreadable", decoder: decoder, bytes: bytes) }
        decoder.pointee.imageSizeLimit = min(decoder.pointee.imageSizeLimit, UInt32(clamping: maxPixels))
        return try body(decoder, library)
    }

    private static func features(of decoder: UnsafeMutablePointer<avifDecoder>) -> Features {
        let image = decoder.pointee.image.pointee
        return Features(width: Int(image.width), height: Int(image.height), hasAlpha: decoder.pointee.alphaPresent != 0,
                        frames: max(1, Int(decoder.pointee.imageCount)), orientation: orientation(of: image))
    }

    /// The EXIF orientation of `irot` (a rotation by 90° steps, anticlockwise) followed by `imir` (mode 0: top and
    /// bottom exchanged, 1: left and right), as HEIF applies them; nil when neither is present.
    static func orientation(of image: avifImage) -> Int? {
        let flags = image.transformFlags
        let rotates = flags & AVIF_TRANSFORM_IROT.rawValue != 0, mirrors = flags & AVIF_TRANSFORM_IMIR.rawValue != 0
        guard rotates || mirrors else { return nil }
        return ImageHeader.exifOrientation(heifQuarterTurns: rotates ? Int(image.irot.angle & 3) : 0,
                                           mirrorMode: mirrors ? Int(image.imir.mode & 1) : nil)
    }

    /// The decoded frame as 8-bit RGB or RGBA (alpha not premultiplied).
    private static func rgb(of image: UnsafeMutablePointer<avifImage>, alpha: Bool, library: AVIFLibrary,
                            subject: String) throws(ImageCoreError) -> DecodedImage {
        var rgb = avifRGBImage()
        library.rgbImageSetDefaults(&rgb, image)
        rgb.depth = 8
        rgb.format = alpha ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB
        let pixelFormat: DecodedImage.PixelFormat = alpha ? .rgba : .rgb
        let width = Int(rgb.width), height = Int(rgb.height)
        rgb.rowBytes = UInt32(width * pixelFormat.bytesPerPixel)
        let count = width * height * pixelFormat.bytesPerPixel
        var result = AVIF_RESULT_OK
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            rgb.pixels = buffer.baseAddress
            result = library.imageYUVToRGB(image, &rgb)
            rgb.pixels = nil
            initialized = result == AVIF_RESULT_OK ? count : 0
        }
        guard result == AVIF_RESULT_OK else {
            throw ImageCoreError(.corrupt, subject: subject, message: "AVIF YUV to RGB failed (libavif: \(describe(result)))")
        }
        return DecodedImage(width: width, height: height, pixelFormat: pixelFormat, pixels: pixels)
    }

    private static func describe(_ result: avifResult) -> String {
        (try? AVIFLibrary.shared.get())?.resultToString(result).map { String(cString: $0) } ?? "result \(result.rawValue)"
    }

    /// Whether the file ends inside one of its top-level boxes (each a 32-bit size, or 1 and a 64-bit size, and a
    /// type; a size of 0 runs to the end): what a download cut short looks like, whatever libavif's parser says of it
    /// (0.11 reports most cuts as a BMFF parse failure).
    static func endsInsideABox(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            guard offset + 8 <= bytes.count else { return true }
            var size = (0..<4).reduce(0) { $0 << 8 | Int(bytes[offset + $1]) }
            if size == 1 {
                guard offset + 16 <= bytes.count else { return true }
                let large = (8..<16).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[offset + $1]) }
                guard large <= UInt64(Int.max) else { return false }
                size = Int(large)
            } else if size == 0 {
                return false
            }
            guard size >= 8 else { return false }  // a malformed box: corrupt, not cut
            let (end, overflow) = offset.addingReportingOverflow(size)
            guard !overflow else { return false }
            offset = end
        }
        return offset > bytes.count
    }

    /// The end of the furthest item extent the `meta` box's `iloc` places in the file (construction method 0, file
    /// offsets), nil when there is no `iloc` or it does not parse (libavif judges those). libavif 0.11 reads only the
    /// items the primary image needs, so a file cut inside its Exif, XMP or another item still decodes: this is how
    /// such a cut is seen. An extent of length 0 ("to the end of the file") ends at the end.
    static func itemsEnd(_ bytes: UnsafeRawBufferPointer) -> Int? {
        /// The big-endian integer of `size` bytes at `offset`, nil beyond `limit` (or the bytes).
        func integer(_ offset: Int, _ size: Int, within limit: Int) -> Int? {
            guard size <= 8, offset >= 0, offset <= min(limit, bytes.count) - size else { return nil }
            let value = (0..<size).reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[offset + $1]) }
            return value <= UInt64(Int.max) ? Int(value) : nil
        }
        /// The children of the box whose content is `range`: (type, content range); every size checked against what
        /// is left, without overflow.
        func children(_ range: Range<Int>) -> [(String, Range<Int>)] {
            var boxes: [(String, Range<Int>)] = []
            var offset = range.lowerBound
            while range.upperBound - offset >= 8, var size = integer(offset, 4, within: range.upperBound) {
                var header = 8
                if size == 1 {
                    guard let large = integer(offset + 8, 8, within: range.upperBound) else { break }
                    (size, header) = (large, 16)
                }
                if size == 0 { size = range.upperBound - offset }
                guard size >= header, size <= range.upperBound - offset else { break }
                boxes.append((String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset + 4..<offset + 8]), as: UTF8.self),
                              offset + header..<offset + size))
                offset += size
            }
            return boxes
        }
        guard let meta = children(0..<bytes.count).first(where: { $0.0 == "meta" })?.1, meta.count >= 4,
              let iloc = children(meta.lowerBound + 4..<meta.upperBound).first(where: { $0.0 == "iloc" })?.1,
              iloc.count >= 8 else { return nil }
        let end = iloc.upperBound
        let version = Int(bytes[iloc.lowerBound])
        guard version <= 2 else { return nil }
        var at = iloc.lowerBound + 4
        let offsetSize = Int(bytes[at] >> 4), lengthSize = Int(bytes[at] & 15)
        let baseOffsetSize = Int(bytes[at + 1] >> 4), indexSize = version >= 1 ? Int(bytes[at + 1] & 15) : 0
        // ISO BMFF allows 0, 4 or 8 bytes for each: anything else is a malformed box, for libavif to judge.
        guard [offsetSize, lengthSize, baseOffsetSize, indexSize].allSatisfy({ [0, 4, 8].contains($0) }) else { return nil }
        at += 2
        let idSize = version == 2 ? 4 : 2
        guard let count = integer(at, idSize, within: end) else { return nil }
        at += idSize
        let extentSize = indexSize + offsetSize + lengthSize
        var furthest = 0
        // Each item takes at least 6 bytes of the box, so the loop ends with the box whatever `count` claims.
        for _ in 0..<count {
            at += idSize
            var method = 0
            if version >= 1 {
                guard let value = integer(at, 2, within: end) else { return nil }
                (method, at) = (value & 15, at + 2)
            }
            at += 2  // data_reference_index
            guard let base = integer(at, baseOffsetSize, within: end) else { return nil }
            at += baseOffsetSize
            guard let extents = integer(at, 2, within: end) else { return nil }
            at += 2
            guard extents <= (end - at) / max(extentSize, 1) else { return nil }  // more extents than the box holds
            if extentSize == 0 {
                // Extents of no bytes: offset 0, length 0, "to the end of the file" from the base.
                if method == 0, extents > 0 { furthest = max(furthest, max(base, bytes.count)) }
                continue
            }
            for _ in 0..<extents {
                at += indexSize
                guard let offset = integer(at, offsetSize, within: end), let length = integer(at + offsetSize, lengthSize, within: end) else {
                    return nil
                }
                at += offsetSize + lengthSize
                guard method == 0 else { continue }
                let (start, overflow) = base.addingReportingOverflow(offset)
                guard !overflow else { return nil }
                let (last, overflowEnd) = start.addingReportingOverflow(length)
                guard !overflowEnd else { return nil }
                furthest = max(furthest, length == 0 ? max(start, bytes.count) : last)
            }
        }
        return furthest
    }

    /// The error for a libavif result, with libavif's own diagnostic when it gave one. A file that ends inside a
    /// top-level box is `.truncated`, whatever the result.
    private static func error(_ result: avifResult, subject: String, stage: String, decoder: UnsafeMutablePointer<avifDecoder>,
                              bytes: UnsafeRawBufferPointer) -> ImageCoreError {
        let detail = withUnsafeBytes(of: decoder.pointee.diag.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let reason = detail.isEmpty ? describe(result) : "\(describe(result)): \(detail)"
        switch result {
        case _ where result != AVIF_RESULT_OUT_OF_MEMORY && endsInsideABox(bytes):
            return ImageCoreError(.truncated, subject: subject, message: "\(stage): the file ends inside one of its boxes (libavif: \(reason))")
        case AVIF_RESULT_TRUNCATED_DATA:
            return ImageCoreError(.truncated, subject: subject, message: "\(stage): the data ends early (libavif: \(reason))")
        case AVIF_RESULT_OUT_OF_MEMORY:
            return ImageCoreError(.io, subject: subject, message: "\(stage): out of memory")
        case AVIF_RESULT_NO_AV1_ITEMS_FOUND, AVIF_RESULT_NO_CODEC_AVAILABLE, AVIF_RESULT_NOT_IMPLEMENTED, AVIF_RESULT_UNSUPPORTED_DEPTH:
            return ImageCoreError(.unsupportedFormat, subject: subject, message: "\(stage): an AVIF libavif does not decode (libavif: \(reason))")
        default:
            return ImageCoreError(.corrupt, subject: subject, message: "\(stage): invalid AVIF data (libavif: \(reason))")
        }
    }

    private static func encodeError(_ result: avifResult, subject: String, stage: String) -> ImageCoreError {
        ImageCoreError(.processing, subject: subject, message: "AVIF encode failed (\(stage)): libavif: \(describe(result))")
    }
}

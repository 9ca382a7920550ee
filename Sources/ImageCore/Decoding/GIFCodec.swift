import CGIF

/// GIF header reading and decoding through giflib's low-level API: every image is decoded, a row at a time, into
/// buffers of ours; the first displayed frame is composed onto the logical screen (which starts transparent; an image's
/// transparent index leaves it so, an image reaching past the screen is clipped; see `decodeFrames` for which images
/// make the first frame).
///
/// Verdicts, checked against Robert Ancell's GIF test suite (`Tests/ImageCoreTests/Fixtures/gif-suite`):
/// - image data that ends before the frame's last pixel is `.truncated` (strict) or the rest left transparent with a
///   warning (lenient), as a JPEG that ends early; so is a file without its trailer (`;`) after the last frame;
/// - a pixel index beyond the colour table, an image with no colour table, an LZW code that names no entry, and a file
///   with no image are `.corrupt` (lenient: a pixel with an index beyond the table is not drawn, with a warning);
/// - the screen's size is checked against the pixel limit from the 13-byte header, each image's before its rows are
///   decoded, and all images' pixels together may be at most `animationWorkFactor` times the limit.
/// Thread-safety: stateless, callable from any thread.
enum GIFCodec {
    /// An animation's frames together may hold at most this many times `maxPixels` (as `WebPCodec`'s).
    static let animationWorkFactor = WebPCodec.animationWorkFactor

    /// The logical screen's size from the header (`GIF87a`/`GIF89a`, then width and height, little-endian).
    static func readSize(_ bytes: UnsafeRawBufferPointer, subject: String) throws(ImageCoreError) -> (width: Int, height: Int) {
        guard bytes.count >= 13 else {
            throw ImageCoreError(.truncated, subject: subject, message: "GIF ends inside its 13-byte header (\(bytes.count) bytes)")
        }
        return (Int(bytes[6]) | Int(bytes[7]) << 8, Int(bytes[8]) | Int(bytes[9]) << 8)
    }

    /// Where giflib reads from: the caller's bytes, how far it has read, and whether a read came up short (giflib
    /// reports a code size above 8 as a read failure too: only a short read means the data ended).
    private final class Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0
        var ranOut = false
        init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }
    }

    /// giflib's read callback: copies up to `count` bytes; fewer at the end, which giflib reports as a read failure.
    private static let read: InputFunc = { gif, buffer, count in
        guard let gif, let buffer, count > 0, let user = gif.pointee.UserData else { return 0 }
        let reader = Unmanaged<Reader>.fromOpaque(user).takeUnretainedValue()
        let available = min(Int(count), reader.bytes.count - reader.offset)
        if available < Int(count) { reader.ranOut = true }
        guard available > 0, let base = reader.bytes.baseAddress else { return 0 }
        UnsafeMutableRawPointer(buffer).copyMemory(from: base + reader.offset, byteCount: available)
        reader.offset += available
        return Int32(available)
    }

    /// Decodes every frame after `checkDimensions` accepted the screen's size; the first frame's pixels, composed, are
    /// returned: RGB when every screen pixel is opaque, RGBA otherwise.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, subject: String, strict: Bool, maxPixels: Int,
        checkDimensions: (Int, Int) throws(ImageCoreError) -> Void
    ) throws(ImageCoreError) -> (DecodedImage, warnings: [String]) {
        let (width, height) = try readSize(bytes, subject: subject)
        try checkDimensions(width, height)
        let reader = Reader(bytes)
        var openError: Int32 = 0
        let opened = withExtendedLifetime(reader) {
            DGifOpen(Unmanaged.passUnretained(reader).toOpaque(), read, &openError)
        }
        guard let gif = opened else { throw error(openError, subject: subject, stage: "GIF header unreadable", reader: reader) }
        defer { var closeError: Int32 = 0; DGifCloseFile(gif, &closeError) }
        return try withExtendedLifetime(reader) { () throws(ImageCoreError) in
            try decodeFrames(gif, reader: reader, width: width, height: height, subject: subject, strict: strict, maxPixels: maxPixels)
        }
    }

    /// What a Graphic Control Extension says of the image after it.
    private struct Control {
        var transparentIndex: Int?
        /// In hundredths of a second.
        var delay = 0
        /// 0-1: leave the image; 2: clear its rectangle; 3: restore what was under it.
        var disposal = 0
    }

    /// Decodes every image; composes the first displayed frame as the GIF test suite defines it: the images up to and
    /// including the first with a delay, each disposed of as it asks before the next is drawn. When no image has a
    /// delay, the images of a looping file (a NETSCAPE2.0 or ANIMEXTS1.0 extension) are frames of their own, as
    /// readers animate them; those of a file that does not loop make one picture (a "high colour" GIF of tiles).
    private static func decodeFrames(
        _ gif: UnsafeMutablePointer<GifFileType>, reader: Reader, width: Int, height: Int, subject: String, strict: Bool,
        maxPixels: Int
    ) throws(ImageCoreError) -> (DecodedImage, warnings: [String]) {
        func error(_ code: Int32, subject: String, stage: String) -> ImageCoreError {
            GIFCodec.error(code, subject: subject, stage: stage, reader: reader)
        }
        var canvas = [UInt8](repeating: 0, count: width * height * 4)
        var firstFrame: [UInt8]?, firstImage: [UInt8]?
        var loops = false
        var warnings: [String] = []
        var frames = 0
        var work = 0
        let workLimit = maxPixels.multipliedReportingOverflow(by: animationWorkFactor)
        var control = Control()
        /// The last composed image's disposal: its rectangle, and the canvas from before it for a restore.
        var dispose: (disposal: Int, x: Int, y: Int, width: Int, height: Int, before: [UInt8]?)?
        /// A failure after the first image was composed: strict mode fails, lenient mode keeps what was composed.
        func endEarly(_ failure: ImageCoreError) throws(ImageCoreError) {
            if strict || frames == 0 { throw failure }
            warnings.append("\(failure.message); the images before it decode")
        }
        records: while true {
            var record = UNDEFINED_RECORD_TYPE
            guard DGifGetRecordType(gif, &record) == GIF_OK else {
                // The data ends where the next block (an image, an extension, the trailer) should start.
                let failure = frames > 0 && gif.pointee.Error == D_GIF_ERR_READ_FAILED && reader.ranOut
                    ? ImageCoreError(.truncated, subject: subject, message: "GIF ends without its trailer after \(frames) image(s)")
                    : error(gif.pointee.Error, subject: subject, stage: "GIF block unreadable")
                try endEarly(failure)
                break records
            }
            switch record {
            case EXTENSION_RECORD_TYPE:
                var code: Int32 = 0
                var block: UnsafeMutablePointer<GifByteType>?
                guard DGifGetExtension(gif, &code, &block) == GIF_OK else {
                    try endEarly(error(gif.pointee.Error, subject: subject, stage: "GIF extension unreadable"))
                    break records
                }
                if code == GRAPHICS_EXT_FUNC_CODE, let block, block[0] >= 4 {
                    control = Control(transparentIndex: block[1] & 1 != 0 ? Int(block[4]) : nil,
                                      delay: Int(block[2]) | Int(block[3]) << 8, disposal: Int(block[1] >> 2) & 7)
                }
                if code == APPLICATION_EXT_FUNC_CODE, let block, block[0] == 11 {
                    let name = String(decoding: UnsafeBufferPointer(start: block + 1, count: 11), as: UTF8.self)
                    loops = loops || name == "NETSCAPE2.0" || name == "ANIMEXTS1.0"
                }
                while block != nil {
                    guard DGifGetExtensionNext(gif, &block) == GIF_OK else {
                        try endEarly(error(gif.pointee.Error, subject: subject, stage: "GIF extension unreadable"))
                        break records
                    }
                }
            case IMAGE_DESC_RECORD_TYPE:
                guard DGifGetImageDesc(gif) == GIF_OK else {
                    try endEarly(error(gif.pointee.Error, subject: subject, stage: "GIF image \(frames + 1) unreadable"))
                    break records
                }
                let image = gif.pointee.Image
                let imageWidth = Int(image.Width), imageHeight = Int(image.Height)
                work += imageWidth * imageHeight
                guard imageWidth * imageHeight <= maxPixels, workLimit.overflow || work <= workLimit.partialValue else {
                    throw ImageCoreError(.dimensions, subject: subject, message: """
                        GIF image \(frames + 1) is \(imageWidth)x\(imageHeight): its images hold more pixels than the limit of \
                        \(maxPixels) an image and \(animationWorkFactor) x \(maxPixels) in all
                        """)
                }
                guard let colors = image.ColorMap ?? gif.pointee.SColorMap else {
                    throw ImageCoreError(.corrupt, subject: subject, message: "GIF image \(frames + 1) has no colour table (neither its own nor a global one)")
                }
                let composing = firstFrame == nil
                if composing, let last = dispose {
                    if last.disposal == 3, let before = last.before {
                        canvas = before
                    } else if last.disposal == 2 {
                        // The image's rectangle cleared, clipped to the screen (an image may lie partly or wholly off it).
                        let (x0, x1) = (min(last.x, width), min(width, last.x + last.width))
                        let (y0, y1) = (min(last.y, height), min(height, last.y + last.height))
                        if x0 < x1 {
                            for y in y0..<max(y0, y1) {
                                canvas.replaceSubrange((y * width + x0) * 4..<(y * width + x1) * 4, with: repeatElement(0, count: (x1 - x0) * 4))
                            }
                        }
                    }
                }
                if composing {
                    dispose = (control.disposal, Int(image.Left), Int(image.Top), imageWidth, imageHeight, control.disposal == 3 ? canvas : nil)
                }
                let outcome = canvas.withUnsafeMutableBufferPointer { canvas in
                    decodeRows(gif, frame: image, colors: colors.pointee, transparentIndex: control.transparentIndex,
                               canvas: composing ? canvas : nil, width: width, height: height)
                }
                let delayed = control.delay > 0
                control = Control()
                switch outcome {
                case .complete: break
                case .outOfTable(let index, let count):
                    let failure = ImageCoreError(.corrupt, subject: subject, message: """
                        GIF image \(frames + 1) uses colour index \(index), beyond its \(count)-colour table
                        """)
                    if strict { throw failure }
                    warnings.append("\(failure.message); such pixels are not drawn (what was under them stays)")
                case .failed(let code, let row):
                    let failure = error(code, subject: subject, stage: "GIF image \(frames + 1) of \(imageWidth)x\(imageHeight) stops at row \(row)")
                    if strict { throw failure }
                    warnings.append(frames == 0 ? "\(failure.message); the rest of the image is left transparent"
                                                : "\(failure.message); the images before it decode")
                    frames += 1
                    if frames == 1 { firstImage = canvas }
                    if composing { firstFrame = canvas }
                    break records
                }
                frames += 1
                if frames == 1 { firstImage = canvas }
                if composing && delayed { firstFrame = canvas }
            case TERMINATE_RECORD_TYPE:
                break records
            default:
                try endEarly(ImageCoreError(.corrupt, subject: subject, message: "GIF has an unknown block type"))
                break records
            }
        }
        guard frames > 0, let firstImage else {
            throw ImageCoreError(.corrupt, subject: subject, message: "GIF holds no image (its trailer comes before any image)")
        }
        let pixels = firstFrame ?? (loops ? firstImage : canvas)
        if frames > 1 {
            warnings.append("GIF of \(frames) images: every image decodes; the first displayed frame's pixels are used")
        }
        return (DecodedImage.fromRGBA(width: width, height: height, pixels: pixels), warnings)
    }

    private enum FrameOutcome {
        case complete
        /// A pixel named a colour beyond the table (the first such index, and the table's size).
        case outOfTable(Int, Int)
        /// giflib failed (its error code) while decoding the given row.
        case failed(Int32, row: Int)
    }

    /// Decodes one frame's rows (interlaced rows in their four passes); with a canvas, composes them onto it, clipped.
    private static func decodeRows(
        _ gif: UnsafeMutablePointer<GifFileType>, frame: GifImageDesc, colors: ColorMapObject, transparentIndex: Int?,
        canvas: UnsafeMutableBufferPointer<UInt8>?, width: Int, height: Int
    ) -> FrameOutcome {
        let frameWidth = Int(frame.Width), frameHeight = Int(frame.Height)
        if frameWidth == 0 || frameHeight == 0 {
            // No pixels: the image data (a code size and its blocks) is skipped.
            var codeSize: Int32 = 0
            var block: UnsafeMutablePointer<GifByteType>?
            guard DGifGetCode(gif, &codeSize, &block) == GIF_OK else { return .failed(gif.pointee.Error, row: 0) }
            while block != nil {
                guard DGifGetCodeNext(gif, &block) == GIF_OK else { return .failed(gif.pointee.Error, row: 0) }
            }
            return .complete
        }
        let rows: [Int] = frame.Interlace
            ? [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { start, step in Array(stride(from: start, to: frameHeight, by: step)) }
            : Array(0..<frameHeight)
        var line = [GifPixelType](repeating: 0, count: frameWidth)
        var outOfTable: (Int, Int)?
        let colorCount = Int(colors.ColorCount)
        for row in rows {
            let status = line.withUnsafeMutableBufferPointer { DGifGetLine(gif, $0.baseAddress, Int32(frameWidth)) }
            guard status == GIF_OK else { return .failed(gif.pointee.Error, row: row) }
            let y = Int(frame.Top) + row
            for x in 0..<frameWidth {
                let index = Int(line[x])
                if index == transparentIndex { continue }
                guard index < colorCount else {
                    if outOfTable == nil { outOfTable = (index, colorCount) }
                    continue
                }
                guard let canvas, y < height, Int(frame.Left) + x < width else { continue }
                let color = colors.Colors[index]
                let offset = (y * width + Int(frame.Left) + x) * 4
                canvas[offset] = color.Red
                canvas[offset + 1] = color.Green
                canvas[offset + 2] = color.Blue
                canvas[offset + 3] = 255
            }
        }
        if let (index, count) = outOfTable { return .outOfTable(index, count) }
        return .complete
    }

    /// The error for a giflib error code: data that runs out (a read came up short, or the image data ended before its
    /// last pixel) is `.truncated`; anything giflib cannot parse is `.corrupt`.
    private static func error(_ code: Int32, subject: String, stage: String, reader: Reader) -> ImageCoreError {
        let reason = GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
        switch code {
        case D_GIF_ERR_EOF_TOO_SOON:
            return ImageCoreError(.truncated, subject: subject, message: "\(stage): the data ends early (giflib: \(reason))")
        case D_GIF_ERR_READ_FAILED where reader.ranOut:
            return ImageCoreError(.truncated, subject: subject, message: "\(stage): the data ends early (giflib: \(reason))")
        case D_GIF_ERR_NOT_ENOUGH_MEM:
            return ImageCoreError(.io, subject: subject, message: "\(stage): out of memory")
        default:
            return ImageCoreError(.corrupt, subject: subject, message: "\(stage): invalid GIF data (giflib: \(reason))")
        }
    }
}

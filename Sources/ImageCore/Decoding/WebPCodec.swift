import CWebP

/// WebP header reading and decoding through libwebp: still images (VP8 lossy, VP8L lossless, VP8X with alpha) by
/// `WebPDecode` into a buffer of ours, animations by libwebpdemux's `WebPAnimDecoder`, every frame of them.
///
/// WebP carries no checksum: damage that still parses (flipped bits inside the compressed data) decodes to wrong
/// pixels without an error, as in JPEG without restart markers. What libwebp does refuse is judged here: a file
/// shorter than its RIFF header declares is `.truncated`; data libwebp cannot parse, or that declares more than its
/// chunk holds, is `.corrupt`. libwebp reports every failure by a return value (no callbacks, no longjmp).
/// Thread-safety: stateless, callable from any thread.
enum WebPCodec {
    /// What the header says: the size (the canvas, for VP8X) and what decoding needs to know.
    struct Features {
        var width: Int
        var height: Int
        var hasAlpha: Bool
        var isAnimated: Bool
    }

    /// An animation's frames times its canvas may be at most this many times `maxPixels`: each frame is composed
    /// onto the full canvas, so a file of many tiny frames would otherwise cost minutes (as `TCJ_MAX_SCANS` caps a
    /// progressive JPEG's scans).
    static let animationWorkFactor = 16

    /// Size, alpha and animation from the header chunks (VP8, VP8L or VP8X), by `WebPGetFeatures`: the first few
    /// dozen bytes, no decoding.
    static func readFeatures(_ bytes: UnsafeRawBufferPointer, subject: String) throws(ImageCoreError) -> Features {
        var features = WebPBitstreamFeatures()
        let status = WebPGetFeatures(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &features)
        guard status == VP8_STATUS_OK else {
            throw error(status, subject: subject, stage: "WebP header unreadable", bytes: bytes)
        }
        return Features(width: Int(features.width), height: Int(features.height), hasAlpha: features.has_alpha != 0,
                        isAnimated: features.has_animation != 0)
    }

    /// Decodes every pixel (every frame of an animation) after `checkDimensions` accepted the header's size; RGBA when
    /// the image has alpha or is animated, RGB otherwise. An animation's pixels are its first frame's, and a warning
    /// says so.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, subject: String, maxPixels: Int,
        checkDimensions: (Int, Int) throws(ImageCoreError) -> Void
    ) throws(ImageCoreError) -> (DecodedImage, warnings: [String]) {
        let features = try readFeatures(bytes, subject: subject)
        try checkDimensions(features.width, features.height)
        try checkContainer(bytes, subject: subject)
        if features.isAnimated { return try decodeAnimation(bytes, features: features, subject: subject, maxPixels: maxPixels) }
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else {
            throw ImageCoreError(.io, subject: subject, message: "libwebp refused its decoder configuration (a library version mismatch)")
        }
        let pixelFormat: DecodedImage.PixelFormat = features.hasAlpha ? .rgba : .rgb
        let stride = features.width * pixelFormat.bytesPerPixel
        let count = stride * features.height
        var status = VP8_STATUS_OK
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            config.output.colorspace = features.hasAlpha ? MODE_RGBA : MODE_RGB
            config.output.is_external_memory = 1
            config.output.u.RGBA.rgba = out.baseAddress
            config.output.u.RGBA.stride = Int32(stride)
            config.output.u.RGBA.size = count
            status = WebPDecode(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &config)
            WebPFreeDecBuffer(&config.output)  // frees nothing of ours (external memory), only what libwebp may hold
            // libwebp writes every row of a decode that succeeds; one that fails leaves no array.
            initialized = status == VP8_STATUS_OK ? count : 0
        }
        guard status == VP8_STATUS_OK else { throw error(status, subject: subject, stage: "WebP decode failed", bytes: bytes) }
        return (DecodedImage(width: features.width, height: features.height, pixelFormat: pixelFormat, pixels: pixels), [])
    }

    /// Every frame decoded and composed onto the canvas, as a viewer shows it; the first frame's canvas is returned.
    private static func decodeAnimation(
        _ bytes: UnsafeRawBufferPointer, features: Features, subject: String, maxPixels: Int
    ) throws(ImageCoreError) -> (DecodedImage, warnings: [String]) {
        var options = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&options) != 0 else {
            throw ImageCoreError(.io, subject: subject, message: "libwebpdemux refused its decoder options (a library version mismatch)")
        }
        options.color_mode = MODE_RGBA
        options.use_threads = 0
        var data = WebPData(bytes: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: bytes.count)
        guard let decoder = WebPAnimDecoderNew(&data, &options) else {
            throw ImageCoreError(.corrupt, subject: subject, message: "animated WebP unreadable: its chunks are damaged or inconsistent")
        }
        defer { WebPAnimDecoderDelete(decoder) }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0 else {
            throw ImageCoreError(.corrupt, subject: subject, message: "animated WebP unreadable: libwebpdemux gave no animation info")
        }
        let width = Int(info.canvas_width), height = Int(info.canvas_height), frames = Int(info.frame_count)
        let (work, overflow) = (width * height).multipliedReportingOverflow(by: frames)
        let workLimit = maxPixels.multipliedReportingOverflow(by: animationWorkFactor)
        guard !overflow, workLimit.overflow || work <= workLimit.partialValue else {
            throw ImageCoreError(.dimensions, subject: subject, message: """
                animated WebP of \(frames) frames on a \(width)x\(height) canvas: \(frames) x \(width * height) pixels to \
                decode, above the limit of \(animationWorkFactor) x \(maxPixels)
                """)
        }
        var first: [UInt8]?
        var decoded = 0
        while WebPAnimDecoderHasMoreFrames(decoder) != 0 {
            var canvas: UnsafeMutablePointer<UInt8>?
            var timestamp: Int32 = 0
            guard WebPAnimDecoderGetNext(decoder, &canvas, &timestamp) != 0, let canvas else {
                throw ImageCoreError(.corrupt, subject: subject, message: "animated WebP frame \(decoded + 1) of \(frames) does not decode")
            }
            // The canvas belongs to the decoder and is overwritten by the next frame: the first one is copied.
            if first == nil { first = Array(UnsafeBufferPointer(start: canvas, count: width * height * 4)) }
            decoded += 1
        }
        guard let first, decoded == frames else {
            throw ImageCoreError(.corrupt, subject: subject, message: "animated WebP declares \(frames) frames but \(decoded) decoded")
        }
        let image = DecodedImage(width: width, height: height, pixelFormat: .rgba, pixels: first)
        let warnings = frames > 1 ? ["animated WebP (\(frames) frames): every frame decodes; the first frame's pixels are used"] : []
        return (image, warnings)
    }

    /// Fails with `.truncated` when the file is shorter than its RIFF header declares (bytes 4..<8, little-endian,
    /// counting from byte 8). Bytes after the container are not the image's and are ignored, as libwebp does.
    static func checkContainer(_ bytes: UnsafeRawBufferPointer, subject: String) throws(ImageCoreError) {
        guard let declared = declaredLength(bytes), declared > bytes.count else { return }
        throw ImageCoreError(.truncated, subject: subject, message: """
            WebP ends early: its RIFF header declares \(declared) bytes, the file holds \(bytes.count)
            """)
    }

    /// The file length the RIFF header declares, nil when the bytes are too short to say.
    private static func declaredLength(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 8 else { return nil }
        return 8 + (Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24)
    }

    /// The error for a libwebp status: data that runs out before the declared end of the file is `.truncated`; data
    /// that runs out inside a complete container (a chunk or partition declaring more than it holds) and anything
    /// libwebp cannot parse are `.corrupt`; a feature libwebp does not decode is `.unsupportedFormat`.
    private static func error(_ status: VP8StatusCode, subject: String, stage: String, bytes: UnsafeRawBufferPointer) -> ImageCoreError {
        let complete = (declaredLength(bytes) ?? .max) <= bytes.count
        switch status {
        case VP8_STATUS_NOT_ENOUGH_DATA, VP8_STATUS_SUSPENDED:
            return complete
                ? ImageCoreError(.corrupt, subject: subject, message: "\(stage): a chunk or partition declares more data than the file holds")
                : ImageCoreError(.truncated, subject: subject, message: "\(stage): the data ends early")
        case VP8_STATUS_UNSUPPORTED_FEATURE:
            return ImageCoreError(.unsupportedFormat, subject: subject, message: "\(stage): a WebP feature libwebp does not decode")
        case VP8_STATUS_OUT_OF_MEMORY:
            return ImageCoreError(.io, subject: subject, message: "\(stage): out of memory")
        case VP8_STATUS_BITSTREAM_ERROR:
            return ImageCoreError(.corrupt, subject: subject, message: "\(stage): invalid WebP data (libwebp: bitstream error)")
        default:
            return ImageCoreError(.corrupt, subject: subject, message: "\(stage): invalid WebP data (libwebp status \(status.rawValue))")
        }
    }
}

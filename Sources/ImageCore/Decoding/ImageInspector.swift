/// Proves that bytes are a real image: format from magic bytes, dimensions from the header, then a full decode.
///
/// Content-Type is evidence, not truth: an HTML page served as `image/jpeg` fails with `.notAnImage`; a real JPEG
/// served as `text/plain` is valid, with a content-type warning. Decoded: JPEG with 8-bit samples (baseline, extended,
/// progressive; 12-bit and lossless JPEGs are `.unsupportedFormat`), PNG, WebP (lossy, lossless, alpha, animated), GIF
/// (every frame; the first one's pixels) and AVIF (8, 10 and 12 bits, alpha, sequences).
/// Thread-safety: a value type over stateless codecs; use one inspector from any number of tasks at once.
public struct ImageInspector: Sendable {
    /// How libjpeg warnings are judged.
    public enum Strictness: String, Sendable, Codable {
        /// A premature end or corrupt entropy-coded data fails ("truncated"/"corrupt"); harmless warnings
        /// ("extraneous bytes before marker", libpng's "known incorrect sRGB profile") are reported, not failed.
        case strict
        /// Any image libjpeg/libpng return pixels for is accepted; every warning is reported.
        case lenient
    }

    /// Largest accepted width × height; larger images fail with `.dimensions` before any pixel buffer is allocated.
    /// An animated WebP's, GIF's or AVIF's frames together may hold at most 16 times as many pixels.
    public var maxPixels: Int
    /// How warnings are judged.
    public var strictness: Strictness

    /// The default limit: 50 megapixels.
    public static let defaultMaxPixels = 50_000_000

    /// An inspector with the given limits.
    public init(maxPixels: Int = defaultMaxPixels, strictness: Strictness = .strict) {
        self.maxPixels = maxPixels
        self.strictness = strictness
    }

    /// Reads format and dimensions without decoding pixels. In strict mode a JPEG header whose markers are damaged
    /// fails here already; harmless header warnings are left for the decode to report.
    ///
    /// - Throws: `.notAnImage`, `.unsupportedFormat`, `.truncated`, `.corrupt` or `.dimensions`, about `subject`.
    public func inspectHeader(_ bytes: [UInt8], subject: String) throws(ImageCoreError) -> ImageHeader {
        let format = try sniffDecodable(bytes, subject: subject)
        return try bytes.withRawBytes { raw throws(ImageCoreError) in
            let (width, height, orientation): (Int, Int, Int?)
            switch format {
            case .jpeg:
                (width, height, orientation) = try JPEGCodec.readSize(raw, strict: strictness == .strict, subject: subject)
            case .webp:
                let features = try WebPCodec.readFeatures(raw, subject: subject)
                (width, height, orientation) = (features.width, features.height, nil)
            case .gif:
                (width, height) = try GIFCodec.readSize(raw, subject: subject)
                orientation = nil
            case .avif:
                let features = try AVIFCodec.readFeatures(raw, subject: subject, maxPixels: maxPixels)
                (width, height, orientation) = (features.width, features.height, features.orientation)
            default:
                (width, height) = try PNGCodec.readIHDR(raw, subject: subject)
                orientation = nil
            }
            try checkDimensions(width, height, subject: subject)
            return ImageHeader(format: format, width: width, height: height, byteCount: bytes.count, orientation: orientation)
        }
    }

    /// Inspects the header, then decodes every pixel.
    ///
    /// - Parameter contentType: the Content-Type the bytes were served with, if any; a mismatch is a warning.
    /// - Throws: as `inspectHeader`, plus `.truncated`/`.corrupt` found while decoding.
    public func validate(_ bytes: [UInt8], subject: String, contentType: String? = nil) throws(ImageCoreError) -> ValidatedImage {
        try decode(bytes, subject: subject, contentType: contentType, scaledDown: false)
    }

    /// The same checks and verdict as `validate`, without keeping pixels: for validation only (inspect, validate).
    ///
    /// A JPEG is decoded at TurboJPEG's smallest DCT scale: every entropy-coded block is still decoded, so truncation
    /// and corrupt data are found exactly as by a full decode, while the inverse DCT, upsampling and colour
    /// conversion shrink to about 1/64 of the work. A PNG, WebP, GIF or AVIF is decoded in full (their libraries have no
    /// cheaper way to read all the data; an animation: every frame). `header` carries the full dimensions.
    public func check(_ bytes: [UInt8], subject: String, contentType: String? = nil) throws(ImageCoreError) -> ImageCheck {
        let validated = try decode(bytes, subject: subject, contentType: contentType, scaledDown: true)
        return ImageCheck(header: validated.header, warnings: validated.warnings)
    }

    private func decode(_ bytes: [UInt8], subject: String, contentType: String?, scaledDown: Bool) throws(ImageCoreError) -> ValidatedImage {
        let format = try sniffDecodable(bytes, subject: subject)
        var warnings = Self.contentTypeWarnings(format, servedAs: contentType)
        let strict = strictness == .strict
        // The full dimensions come back beside the pixels: a scaled-down JPEG decode is smaller than its header says.
        let decoded: (image: DecodedImage, warnings: [String], width: Int, height: Int, orientation: Int?) = try bytes.withRawBytes { raw throws(ImageCoreError) in
            switch format {
            case .jpeg:
                let decoded = try JPEGCodec.decode(raw, strict: strict, subject: subject,
                                                   scaleNumerator: { _, _, _ in scaledDown ? 1 : 8 }) {
                    width, height throws(ImageCoreError) in try checkDimensions(width, height, subject: subject)
                }
                return (decoded.image, decoded.warnings, decoded.fullWidth, decoded.fullHeight, decoded.orientation)
            case .webp:
                let (image, warnings) = try WebPCodec.decode(raw, subject: subject, maxPixels: maxPixels) { width, height throws(ImageCoreError) in
                    try checkDimensions(width, height, subject: subject)
                }
                return (image, warnings, image.width, image.height, nil)
            case .gif:
                let (image, warnings) = try GIFCodec.decode(raw, subject: subject, strict: strict, maxPixels: maxPixels) { width, height throws(ImageCoreError) in
                    try checkDimensions(width, height, subject: subject)
                }
                return (image, warnings, image.width, image.height, nil)
            case .avif:
                let (image, features, warnings) = try AVIFCodec.decode(raw, subject: subject, maxPixels: maxPixels) { width, height throws(ImageCoreError) in
                    try checkDimensions(width, height, subject: subject)
                }
                return (image, warnings, image.width, image.height, features.orientation)
            default:
                let (image, warnings) = try PNGCodec.decode(raw, subject: subject) { width, height throws(ImageCoreError) in
                    try checkDimensions(width, height, subject: subject)
                }
                return (image, warnings, image.width, image.height, nil)
            }
        }
        warnings += decoded.warnings
        let header = ImageHeader(format: format, width: decoded.width, height: decoded.height, byteCount: bytes.count,
                                 orientation: decoded.orientation)
        return ValidatedImage(header: header, image: decoded.image, warnings: warnings)
    }

    /// The warning for bytes of `format` served as `contentType` when the two disagree (Content-Type is evidence, not
    /// truth), else none.
    static func contentTypeWarnings(_ format: ImageFormat, servedAs contentType: String?) -> [String] {
        guard let contentType, ImageFormat(contentType: contentType) != format else { return [] }
        return ["content-type mismatch: served as '\(contentType)' but the bytes are \(format.rawValue.uppercased())"]
    }

    private func sniffDecodable(_ bytes: [UInt8], subject: String) throws(ImageCoreError) -> ImageFormat {
        guard !bytes.isEmpty else {
            throw ImageCoreError(.notAnImage, subject: subject, message: "empty body (0 bytes)")
        }
        guard let format = ImageFormat.sniff(bytes) else {
            throw ImageCoreError(.notAnImage, subject: subject, message: "the bytes are \(Self.describeStart(of: bytes)), not an image")
        }
        guard format.isDecodable else {
            throw ImageCoreError(.unsupportedFormat, subject: subject,
                                 message: "\(format.rawValue.uppercased()) images are not supported (\(ImageFormat.decodableNames) are)")
        }
        return format
    }

    /// Fails with `.dimensions` for a zero size or more than `maxPixels`.
    func checkDimensions(_ width: Int, _ height: Int, subject: String) throws(ImageCoreError) {
        guard width > 0, height > 0 else {
            throw ImageCoreError(.dimensions, subject: subject, message: "image is \(width)x\(height): zero size")
        }
        let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixels <= maxPixels else {
            throw ImageCoreError(.dimensions, subject: subject,
                                 message: "image is \(width)x\(height), above the limit of \(maxPixels) pixels")
        }
    }

    /// A short description of bytes that are not an image: "an HTML page", or the first bytes in hex.
    static func describeStart(of bytes: [UInt8]) -> String {
        let prefix = bytes.prefix(64)
        let text = String(decoding: prefix, as: UTF8.self).trimmingWhitespace().lowercased()
        if text.hasPrefix("<!doctype html") || text.hasPrefix("<html") || text.contains("<body") { return "an HTML page" }
        if text.hasPrefix("<?xml") || text.hasPrefix("<svg") { return "an XML/SVG document" }
        if text.hasPrefix("{") || text.hasPrefix("[") { return "a JSON document" }
        let hex = bytes.prefix(8).map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }
        return "unknown magic bytes \(hex.joined(separator: " "))"
    }
}

/// An image that passed validation: its header, its pixels and any warnings.
public struct ValidatedImage: Sendable {
    /// Format, dimensions and encoded size.
    public var header: ImageHeader
    /// The decoded pixels.
    public var image: DecodedImage
    /// Non-fatal findings: content-type mismatch, harmless decoder warnings.
    public var warnings: [String]

    /// The verdict without the pixels.
    public var asCheck: ImageCheck { ImageCheck(header: header, warnings: warnings) }
}

/// The verdict of `ImageInspector.check`: the image is valid; its header and any warnings.
public struct ImageCheck: Sendable {
    /// Format, full dimensions and encoded size.
    public var header: ImageHeader
    /// Non-fatal findings.
    public var warnings: [String]
}

/// Encodes images as JPEG (the origin server's images; resized variants later).
public enum JPEGEncoder {
    /// Encodes `image` with the given quality (1...100).
    public static func encode(_ image: DecodedImage, quality: Int = 85) throws(ImageCoreError) -> [UInt8] {
        try JPEGCodec.encode(image, quality: max(1, min(100, quality)))
    }
}

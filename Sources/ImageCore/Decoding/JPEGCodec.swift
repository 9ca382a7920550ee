import CTurboJPEG
import NIOConcurrencyHelpers

/// JPEG header reading, decoding and encoding through TurboJPEG (libjpeg-turbo 2.1's `tj*` API).
///
/// Thread-safety: every method may be called from any thread. A TurboJPEG handle is not thread-safe, so each call
/// borrows one from a small pool and returns it afterwards.
enum JPEGCodec {
    /// What to do with a libjpeg warning.
    enum WarningDisposition: Equatable {
        /// Every viewer opens such files (e.g. "extraneous bytes before marker"): report, don't fail.
        case benign
        /// Data ends early.
        case truncated
        /// Damaged entropy-coded data or structure.
        case corrupt
    }

    /// Classifies a libjpeg message. The rule is documented in docs/architecture.md ("Validation rule").
    static func disposition(ofWarning message: String) -> WarningDisposition {
        let lowered = message.lowercased()
        if lowered.contains("extraneous bytes before marker") { return .benign }
        if lowered.contains("premature end") { return .truncated }
        return .corrupt
    }

    static func readHeader(_ bytes: UnsafeRawBufferPointer, subject: String) throws(ImageCoreError) -> (width: Int, height: Int, colorspace: Int32) {
        try decompressors.withHandle { handle throws(ImageCoreError) in
            var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
            let status = tjDecompressHeader3(
                handle, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt(bytes.count),
                &width, &height, &subsampling, &colorspace)
            if status != 0 {
                let message = errorMessage(handle)
                if message.lowercased().contains("empty jpeg image") {
                    throw ImageCoreError(.dimensions, subject: subject, message: "JPEG declares zero width or height")
                }
                let reason: ImageCoreError.Reason = disposition(ofWarning: message) == .truncated ? .truncated : .corrupt
                throw ImageCoreError(reason, subject: subject, message: "JPEG header unreadable: \(message)")
            }
            return (Int(width), Int(height), colorspace)
        }
    }

    /// Decodes to gray (grayscale JPEGs) or RGB (everything else, CMYK converted), applying the warning rule.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, width: Int, height: Int, colorspace: Int32, strict: Bool, subject: String
    ) throws(ImageCoreError) -> (DecodedImage, warnings: [String]) {
        let isGray = colorspace == Int32(TJCS_GRAY.rawValue)
        let isCMYK = colorspace == Int32(TJCS_CMYK.rawValue) || colorspace == Int32(TJCS_YCCK.rawValue)
        let tjFormat: TJPF = isGray ? TJPF_GRAY : (isCMYK ? TJPF_CMYK : TJPF_RGB)
        let channels = isGray ? 1 : (isCMYK ? 4 : 3)
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        var warnings: [String] = []

        try decompressors.withHandle { handle throws(ImageCoreError) in
            // First pass stops at the first warning, so a damaged file is caught even when a later, harmless warning
            // would overwrite libjpeg's single message slot.
            var flags = strict ? TJFLAG_STOPONWARNING : 0
            while true {
                let status = pixels.withUnsafeMutableBufferPointer { out in
                    tjDecompress2(
                        handle, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt(bytes.count),
                        out.baseAddress, Int32(width), 0, Int32(height), Int32(tjFormat.rawValue), flags)
                }
                if status == 0 { return }
                let message = errorMessage(handle)
                let isWarning = tjGetErrorCode(handle) == Int32(TJERR_WARNING.rawValue)
                let disposition = disposition(ofWarning: message)
                if !isWarning {
                    let reason: ImageCoreError.Reason = disposition == .truncated ? .truncated : .corrupt
                    throw ImageCoreError(reason, subject: subject, message: "JPEG decode failed: \(message)")
                }
                if !strict || disposition == .benign {
                    warnings.append(message)
                    if flags == 0 { return }
                    flags = 0  // decode again, letting libjpeg run past the benign warning
                    continue
                }
                let reason: ImageCoreError.Reason = disposition == .truncated ? .truncated : .corrupt
                throw ImageCoreError(reason, subject: subject, message: "JPEG data damaged: \(message)")
            }
        }
        // The second pass reports only its last warning; drop a repeat of the first.
        if warnings.count == 2, warnings[0] == warnings[1] { warnings.removeLast() }

        if isCMYK {
            pixels = cmykToRGB(pixels, pixelCount: width * height)
            return (DecodedImage(width: width, height: height, pixelFormat: .rgb, pixels: pixels), warnings)
        }
        return (DecodedImage(width: width, height: height, pixelFormat: isGray ? .gray : .rgb, pixels: pixels), warnings)
    }

    /// Encodes gray or RGB(A) pixels as a baseline JPEG with 4:2:0 chroma subsampling (4:0:0 for gray).
    static func encode(_ image: DecodedImage, quality: Int) throws(ImageCoreError) -> [UInt8] {
        let format: TJPF
        switch image.pixelFormat {
        case .gray: format = TJPF_GRAY
        case .rgb: format = TJPF_RGB
        case .rgba: format = TJPF_RGBA
        case .grayAlpha:
            return try encode(image.droppingAlpha(), quality: quality)
        }
        return try compressors.withHandle { handle throws(ImageCoreError) in
            var output: UnsafeMutablePointer<UInt8>?
            var size: UInt = 0
            let subsampling = image.pixelFormat == .gray ? TJSAMP_GRAY : TJSAMP_420
            let status = image.pixels.withUnsafeBufferPointer { pixels in
                tjCompress2(
                    handle, pixels.baseAddress, Int32(image.width), 0, Int32(image.height), Int32(format.rawValue),
                    &output, &size, Int32(subsampling.rawValue), Int32(quality), TJFLAG_ACCURATEDCT)
            }
            defer { if let output { tjFree(output) } }
            guard status == 0, let output else {
                throw ImageCoreError(.corrupt, subject: "jpeg-encoder", message: "JPEG encode failed: \(errorMessage(handle))")
            }
            return Array(UnsafeBufferPointer(start: output, count: Int(size)))
        }
    }

    private static func errorMessage(_ handle: tjhandle?) -> String {
        guard let cString = tjGetErrorStr2(handle) else { return "unknown TurboJPEG error" }
        return String(cString: cString)
    }

    /// Adobe CMYK JPEGs store inverted values; libjpeg hands them back as such, so R = C·K/255.
    private static func cmykToRGB(_ cmyk: [UInt8], pixelCount: Int) -> [UInt8] {
        var rgb = [UInt8](repeating: 0, count: pixelCount * 3)
        for index in 0..<pixelCount {
            let k = UInt16(cmyk[index * 4 + 3])
            rgb[index * 3] = UInt8(UInt16(cmyk[index * 4]) * k / 255)
            rgb[index * 3 + 1] = UInt8(UInt16(cmyk[index * 4 + 1]) * k / 255)
            rgb[index * 3 + 2] = UInt8(UInt16(cmyk[index * 4 + 2]) * k / 255)
        }
        return rgb
    }

    private static let decompressors = TurboJPEGHandlePool { tjInitDecompress() }
    private static let compressors = TurboJPEGHandlePool { tjInitCompress() }
}

extension DecodedImage {
    /// The same image without its alpha channel.
    func droppingAlpha() -> DecodedImage {
        switch pixelFormat {
        case .gray, .rgb: return self
        case .grayAlpha:
            return DecodedImage(width: width, height: height, pixelFormat: .gray,
                                pixels: stride(from: 0, to: pixels.count, by: 2).map { pixels[$0] })
        case .rgba:
            var rgb = [UInt8](); rgb.reserveCapacity(width * height * 3)
            for index in stride(from: 0, to: pixels.count, by: 4) {
                rgb.append(pixels[index]); rgb.append(pixels[index + 1]); rgb.append(pixels[index + 2])
            }
            return DecodedImage(width: width, height: height, pixelFormat: .rgb, pixels: rgb)
        }
    }
}

/// A pool of TurboJPEG handles: a handle serves one call at a time, and making one per call costs an allocation.
final class TurboJPEGHandlePool: Sendable {
    /// Handles are opaque C pointers; the mutex hands each one to a single caller at a time, so sharing the pool
    /// between threads is safe even though the pointer type is not Sendable.
    private struct Handles: @unchecked Sendable { var free: [tjhandle] = [] }
    private let handles = NIOLockedValueBox(Handles())
    private let make: @Sendable () -> tjhandle?
    private let maximumIdle = 8

    init(make: @escaping @Sendable () -> tjhandle?) { self.make = make }

    func withHandle<T>(_ body: (tjhandle) throws(ImageCoreError) -> T) throws(ImageCoreError) -> T {
        let pooled = handles.withLockedValue { $0.free.popLast() }
        guard let handle = pooled ?? make() else {
            throw ImageCoreError(.io, subject: "turbojpeg", message: "could not create a TurboJPEG handle (out of memory?)")
        }
        defer {
            let kept = handles.withLockedValue { state -> Bool in
                guard state.free.count < maximumIdle else { return false }
                state.free.append(handle)
                return true
            }
            if !kept { tjDestroy(handle) }
        }
        return try body(handle)
    }
}

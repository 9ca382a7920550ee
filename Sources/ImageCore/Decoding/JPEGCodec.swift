import CImageOps
import CJPEGDecoder
import CTurboJPEG
import Glibc
import NIOConcurrencyHelpers

/// JPEG header reading and decoding through libjpeg (CJPEGDecoder), encoding through TurboJPEG.
///
/// Every read uses a decoder of its own, made for that one image and destroyed after it, so nothing a previous image
/// did can change the verdict on the next. libjpeg's warnings are all recorded, each with what it means
/// (`tcj_finding`), and judged by `judge(_:strict:subject:)`, the validation rule of docs/architecture.md.
/// Thread-safety: every method may be called from any thread.
enum JPEGCodec {
    /// A decoded JPEG: pixels (possibly DCT-scaled), the full size from the header, and every warning.
    struct Decoded {
        var image: DecodedImage
        var fullWidth: Int
        var fullHeight: Int
        var warnings: [String]
        /// The EXIF orientation, nil when none is declared.
        var orientation: Int?
        /// The ICC profile RGB pixels are still in after a colour-managed decode, to be converted to sRGB after the
        /// reduce (`ImageProcessor.Source.profile`); nil when they are sRGB (or were converted: CMYK).
        var profile: [UInt8]? = nil
    }

    /// The size the header declares, after reading every marker up to the first scan and applying the warning rule
    /// to what it found (so damage in the header fails here; harmless warnings are the decode's to report).
    static func readSize(_ bytes: UnsafeRawBufferPointer, strict: Bool, subject: String) throws(ImageCoreError)
        -> (width: Int, height: Int, orientation: Int?) {
        let decoder = try Decoder(bytes, subject: subject)
        let header = try decoder.readHeader(strict: strict, subject: subject)
        _ = try judge(decoder.diagnostics, strict: strict, subject: subject)
        return (Int(header.width), Int(header.height), decoder.exifOrientation)
    }

    /// Reads the header, lets `checkDimensions` refuse the size before any pixel buffer exists, then decodes every
    /// scan at the DCT scale n/8 that `scaleNumerator` picks from the full size and the EXIF orientation (8: full
    /// size; clamped to 1...8). Gray JPEGs decode to one byte per pixel, everything else to RGB (CMYK and YCCK
    /// converted). `colorManaged` reads an embedded ICC profile for sRGB output (thumbnails): CMYK is converted here,
    /// RGB left in its profile, returned beside the pixels (`Decoded.profile`) to be converted after the reduce;
    /// without it the pixels are libjpeg's, exactly as djpeg writes them (validation, the decoded memory tier). A decode that is
    /// not a verdict (`trusted`: a variant, a thumbnail) runs on libjpeg-turbo's fast Huffman path, the same pixels
    /// without the warnings for damaged codes (`tcj_decoder_trust`). A colour-managed decode that is a `check` too
    /// (`ImageInspector.check`'s verdict and warnings, `inspect --placeholders`) reads the profile with a decoder of its
    /// own, so that what the profile's chunks hold (a damaged chunk sequence, a profile that cannot be used) adds no
    /// warning the check would not give.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, strict: Bool, subject: String,
        scaleNumerator: (_ width: Int, _ height: Int, _ orientation: Int?) -> Int = { _, _, _ in 8 },
        colorManaged: Bool = false, trusted: Bool = false, checking: Bool = false,
        checkDimensions: (Int, Int) throws(ImageCoreError) -> Void
    ) throws(ImageCoreError) -> Decoded {
        precondition(!(trusted && checking), "a check is never trusted")
        let decoder = try Decoder(bytes, subject: subject)
        if trusted { decoder.trust() }
        let header = try decoder.readHeader(strict: strict, subject: subject)
        let fullWidth = Int(header.width), fullHeight = Int(header.height)
        try checkDimensions(fullWidth, fullHeight)
        let exifWarnings = decoder.exifWarnings, orientation = decoder.exifOrientation
        let format: tcj_pixel_format, pixelFormat: DecodedImage.PixelFormat
        switch header.color_space {
        case TCJ_COLOR_GRAY: (format, pixelFormat) = (TCJ_PIXELS_GRAY, .gray)
        case TCJ_COLOR_CMYK, TCJ_COLOR_YCCK: (format, pixelFormat) = (TCJ_PIXELS_CMYK, .rgb)
        default: (format, pixelFormat) = (TCJ_PIXELS_RGB, .rgb)
        }
        let numerator = min(8, max(1, scaleNumerator(fullWidth, fullHeight, orientation)))
        let (width, height) = try decoder.outputSize(scaleNumerator: numerator, subject: subject)
        let channels = Int(format.rawValue)
        let profile: [UInt8]?
        if format == TCJ_PIXELS_GRAY || !colorManaged {
            profile = nil
        } else if checking {
            profile = try iccProfileAlone(bytes, subject: subject).profile
        } else {
            profile = try decoder.iccProfile(subject: subject)
        }
        var pixels = try decoder.decode(scaleNumerator: numerator, format: format, count: width * height * channels, subject: subject)
        var warnings = try judge(decoder.diagnostics, strict: strict, subject: subject) + exifWarnings
        let inverted = header.adobe_marker != 0
        var pending: [UInt8]?
        if let profile {
            // RGB is converted after the reduce, on the thumbnail's pixels (as libvips' thumbnail and imgproxy do);
            // CMYK now, since only RGB is resampled.
            let layout = channels == 3 ? TIO_PIXELS_RGB : inverted ? TIO_PIXELS_CMYK_INVERTED : TIO_PIXELS_CMYK
            let conversion = ColorProfile.Conversion.to(layout, from: profile)
            if let why = conversion.unusable {
                if !checking { warnings.append("ICC profile ignored (the pixels are taken as sRGB): \(why)") }
            } else if conversion.converts {
                if channels == 3 {
                    pending = profile
                } else if let rgb = conversion.apply(pixels, layout: layout) {
                    pixels = rgb
                }
            }
        }
        if pixels.count == width * height * 4 { pixels = cmykToRGB(pixels, pixelCount: width * height, inverted: inverted) }
        return Decoded(image: DecodedImage(width: width, height: height, pixelFormat: pixelFormat, pixels: pixels),
                       fullWidth: fullWidth, fullHeight: fullHeight, warnings: warnings, orientation: orientation, profile: pending)
    }

    /// Whether a colour-managed decode of these bytes differs from a plain one: a JPEG whose embedded ICC profile reads
    /// and is not sRGB's (or is a CMYK profile). False for anything that does not read (the decode will say why).
    static func needsColorConversion(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let read = try? iccProfileAlone(bytes, subject: ""), read.header.color_space != TCJ_COLOR_GRAY,
              let profile = read.profile else { return false }
        return ColorProfile.needsConversion(profile)
    }

    /// The header and the embedded ICC profile (nil when there is none), read by a decoder of their own: what reading
    /// them finds (a damaged chunk sequence) is no other decode's warning.
    private static func iccProfileAlone(_ bytes: UnsafeRawBufferPointer, subject: String) throws(ImageCoreError)
        -> (header: tcj_header, profile: [UInt8]?) {
        let decoder = try Decoder(bytes, subject: subject)
        let header = try decoder.readHeader(strict: false, subject: subject)
        return (header, try decoder.iccProfile(subject: subject))
    }

    /// The validation rule (docs/architecture.md, "Validation rule"): a fatal libjpeg error always fails; in strict
    /// mode, data that ends early fails as `.truncated` and damaged entropy-coded data (bytes left over once a scan
    /// decoded included) as `.corrupt`, while junk between header segments and ignored metadata are warnings. A valid
    /// JPEG of a kind the decoder does not decode (12-bit, lossless, hierarchical) is `.unsupportedFormat`, judged from
    /// its frame header alone. Returns the warnings to report.
    static func judge(_ diagnostics: tcj_diagnostics, strict: Bool, subject: String) throws(ImageCoreError) -> [String] {
        var diagnostics = diagnostics
        let recorded = recordedWarnings(&diagnostics)
        let dataEnded = diagnostics.findings_seen & (1 << TCJ_FINDING_DATA_ENDED.rawValue) != 0
        if diagnostics.error == TCJ_ERROR_UNSUPPORTED_FRAME,
           let kind = unsupportedKind(marker: Int(diagnostics.frame_marker), precision: Int(diagnostics.precision)) {
            throw ImageCoreError(.unsupportedFormat, subject: subject, message: """
                \(kind) is not supported (8-bit baseline, extended and progressive JPEGs are)
                """)
        }
        if diagnostics.error != TCJ_ERROR_NONE {
            let message = withUnsafeBytes(of: &diagnostics.error_message) { cString($0) }
            switch diagnostics.error {
            case TCJ_ERROR_EMPTY_IMAGE:
                throw ImageCoreError(.dimensions, subject: subject, message: "JPEG declares zero width or height")
            case TCJ_ERROR_MISUSE:
                preconditionFailure("CJPEGDecoder misuse: \(message)")
            default:
                let stage = diagnostics.error_in_header != 0 ? "JPEG header unreadable" : "JPEG decode failed"
                // Data that ran out explains whatever libjpeg tripped over next (a fake end marker in a table, say).
                if dataEnded {
                    throw ImageCoreError(.truncated, subject: subject, message: "\(stage): the data ends early (\(message))")
                }
                throw ImageCoreError(.corrupt, subject: subject, message: "\(stage): \(message)")
            }
        }
        guard strict else { return recorded.map(\.message) }
        if dataEnded {
            throw ImageCoreError(.truncated, subject: subject, message: "JPEG data ends early: Premature end of JPEG file")
        }
        if diagnostics.findings_seen & (1 << TCJ_FINDING_DAMAGED_DATA.rawValue) != 0 {
            let first = recorded.first { $0.finding == TCJ_FINDING_DAMAGED_DATA }?.message ?? "damaged entropy-coded data"
            throw ImageCoreError(.corrupt, subject: subject, message: "JPEG data damaged: \(first)")
        }
        return recorded.map(\.message)
    }

    /// What kind of valid JPEG a frame libjpeg refused is ("lossless JPEG (SOF3)", "12-bit JPEG (precision 12)"); nil
    /// when the frame header is not a valid JPEG's (the reserved JPG marker, a precision of 16 for a DCT process), which
    /// is then judged corrupt. ITU T.81 allows precision 8 or 12 for DCT processes, 2-16 for lossless ones.
    static func unsupportedKind(marker: Int, precision: Int) -> String? {
        switch marker {
        case 0xC3, 0xC7, 0xCB, 0xCF: return "lossless JPEG (SOF\(marker - 0xC0))"
        case 0xC5, 0xC6, 0xCD, 0xCE: return "hierarchical JPEG (SOF\(marker - 0xC0))"
        case 0: return precision == 12 ? "12-bit JPEG (precision 12)" : nil
        default: return nil
        }
    }

    /// The distinct warnings the decoder recorded, in order.
    private static func recordedWarnings(_ diagnostics: inout tcj_diagnostics) -> [(finding: tcj_finding, message: String)] {
        let count = Int(diagnostics.recorded_count)
        let findings = withUnsafeBytes(of: &diagnostics.recorded_findings) { Array($0.bindMemory(to: tcj_finding.self).prefix(count)) }
        return withUnsafeBytes(of: &diagnostics.recorded_messages) { raw in
            (0..<count).map { index in
                let length = Int(TCJ_MESSAGE_LENGTH)
                return (findings[index], cString(UnsafeRawBufferPointer(rebasing: raw[(index * length)..<((index + 1) * length)])))
            }
        }
    }

    private static func cString(_ raw: UnsafeRawBufferPointer) -> String {
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
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
                let message = tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown TurboJPEG error"
                throw ImageCoreError(.corrupt, subject: "jpeg-encoder", message: "JPEG encode failed: \(message)")
            }
            return Array(UnsafeBufferPointer(start: output, count: Int(size)))
        }
    }

    /// CMYK without a profile, by the naive formula R = (1 - C)(1 - K). Adobe CMYK JPEGs (an APP14 marker, nearly all
    /// of them) store inverted values, 255 = no ink, so R = C·K/255; others store ink amounts.
    private static func cmykToRGB(_ cmyk: [UInt8], pixelCount: Int, inverted: Bool) -> [UInt8] {
        var rgb = [UInt8](repeating: 0, count: pixelCount * 3)
        for index in 0..<pixelCount {
            func paper(_ value: UInt8) -> UInt16 { inverted ? UInt16(value) : 255 - UInt16(value) }
            let k = paper(cmyk[index * 4 + 3])
            rgb[index * 3] = UInt8(paper(cmyk[index * 4]) * k / 255)
            rgb[index * 3 + 1] = UInt8(paper(cmyk[index * 4 + 1]) * k / 255)
            rgb[index * 3 + 2] = UInt8(paper(cmyk[index * 4 + 2]) * k / 255)
        }
        return rgb
    }

    private static let compressors = TurboJPEGHandlePool { tjInitCompress() }
}

extension JPEGCodec {
    /// One libjpeg decode of one image: created for it, destroyed with it, never shared.
    fileprivate struct Decoder: ~Copyable {
        private let handle: OpaquePointer

        /// A decoder over `bytes`, which must outlive it.
        init(_ bytes: UnsafeRawBufferPointer, subject: String) throws(ImageCoreError) {
            guard let handle = tcj_decoder_create(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count) else {
                throw ImageCoreError(.io, subject: subject, message: "could not create a JPEG decoder (out of memory)")
            }
            self.handle = handle
        }

        deinit { tcj_decoder_destroy(handle) }

        /// Hands libjpeg every byte at once (`tcj_decoder_trust`): before the header only.
        func trust() { tcj_decoder_trust(handle) }

        var diagnostics: tcj_diagnostics { tcj_decoder_diagnostics(handle).pointee }

        /// A warning when the EXIF block is damaged (empty when there is none, or it is sound). Between the header
        /// and the decode only: the decode frees the saved block.
        var exifWarnings: [String] {
            var data: UnsafePointer<UInt8>?
            var length = 0
            tcj_exif(handle, &data, &length)
            guard let data else { return [] }
            return EXIFBlock.problem(in: UnsafeRawBufferPointer(start: data, count: length)).map { ["EXIF data ignored: \($0)"] } ?? []
        }

        /// The EXIF orientation, nil when there is no sound EXIF block or it declares none. Between the header and
        /// the decode only, as `exifWarnings`.
        var exifOrientation: Int? {
            var data: UnsafePointer<UInt8>?
            var length = 0
            tcj_exif(handle, &data, &length)
            guard let data else { return nil }
            return EXIFBlock.orientation(in: UnsafeRawBufferPointer(start: data, count: length))
        }

        /// The embedded ICC profile, nil when there is none (or its chunks are damaged: a recorded warning). Between
        /// the header and the decode only.
        func iccProfile(subject: String) throws(ImageCoreError) -> [UInt8]? {
            var data: UnsafeMutablePointer<UInt8>?
            var length: UInt32 = 0
            guard tcj_icc_profile(handle, &data, &length) == 0 else {
                _ = try JPEGCodec.judge(diagnostics, strict: true, subject: subject)
                preconditionFailure("tcj_icc_profile failed without an error")
            }
            guard let data else { return nil }
            defer { free(data) }
            return Array(UnsafeBufferPointer(start: data, count: Int(length)))
        }

        /// The header; a fatal error is judged (and thrown) here, warnings are left for the caller to judge.
        func readHeader(strict: Bool, subject: String) throws(ImageCoreError) -> tcj_header {
            var header = tcj_header()
            guard tcj_read_header(handle, &header) == 0 else {
                _ = try JPEGCodec.judge(diagnostics, strict: strict, subject: subject)
                preconditionFailure("tcj_read_header failed without an error")
            }
            return header
        }

        func outputSize(scaleNumerator: Int, subject: String) throws(ImageCoreError) -> (width: Int, height: Int) {
            var width: Int32 = 0, height: Int32 = 0
            guard tcj_output_size(handle, Int32(scaleNumerator), 8, &width, &height) == 0 else {
                _ = try JPEGCodec.judge(diagnostics, strict: true, subject: subject)
                preconditionFailure("tcj_output_size failed without an error")
            }
            return (Int(width), Int(height))
        }

        /// The pixels, `count` bytes (the output size times the format's channels). The array is not zeroed first:
        /// a decode that succeeds has written every byte (`tcj_decode` refuses a buffer of any other size), and one
        /// that fails leaves no array (2.5% of a full decode's time went to zeroing a buffer about to be overwritten).
        func decode(scaleNumerator: Int, format: tcj_pixel_format, count: Int, subject: String) throws(ImageCoreError) -> [UInt8] {
            var status: Int32 = 0
            let pixels = [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
                status = tcj_decode(handle, Int32(scaleNumerator), 8, format, out.baseAddress, count)
                initialized = status == 0 ? count : 0
            }
            guard status == 0 else {
                _ = try JPEGCodec.judge(diagnostics, strict: true, subject: subject)
                preconditionFailure("tcj_decode failed without an error")
            }
            return pixels
        }
    }
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

/// A pool of TurboJPEG compressor handles: a handle serves one call at a time, and making one per call costs an
/// allocation. A handle whose call failed is destroyed, never pooled, so no failure can leak into the next call.
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
        let result: T
        do {
            result = try body(handle)
        } catch {
            tjDestroy(handle)
            throw error
        }
        let kept = handles.withLockedValue { state -> Bool in
            guard state.free.count < maximumIdle else { return false }
            state.free.append(handle)
            return true
        }
        if !kept { tjDestroy(handle) }
        return result
    }
}

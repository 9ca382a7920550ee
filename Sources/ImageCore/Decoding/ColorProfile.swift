import CImageOps

/// Embedded ICC profiles to sRGB (Little CMS through `CImageOps`), as libvips' thumbnailer does: pixels described by
/// an Adobe RGB, Display P3 or CMYK profile come out in sRGB, the colour space of the web and of every encoder here;
/// pixels without a profile are taken as sRGB. Thread-safety: stateless; each call has its own Little CMS context.
enum ColorProfile {
    /// What a conversion did.
    enum Outcome {
        /// The pixels in sRGB, 3 bytes each.
        case converted([UInt8])
        /// The profile is sRGB's: the pixels are already sRGB.
        case alreadySRGB
        /// The profile cannot be used, and why (the caller warns and takes the pixels as sRGB).
        case unusable(String)
    }

    /// `pixels` (laid out as `layout` says) converted from `profile`'s colour space to sRGB: RGB, or RGBA for RGBA.
    static func toSRGB(_ pixels: [UInt8], layout: tio_pixels, profile: [UInt8]) -> Outcome {
        let count = pixels.count / (layout == TIO_PIXELS_RGB ? 3 : 4)
        var out = [UInt8](repeating: 0, count: count * (layout == TIO_PIXELS_RGBA ? 4 : 3))
        var message = [CChar](repeating: 0, count: 256)
        let result = profile.withUnsafeBytes { icc in
            pixels.withUnsafeBufferPointer { input in
                out.withUnsafeMutableBufferPointer { output in
                    tio_icc_to_srgb(icc.baseAddress?.assumingMemoryBound(to: UInt8.self), icc.count, layout,
                                    input.baseAddress, output.baseAddress, count, &message, message.count)
                }
            }
        }
        switch result {
        case TIO_ICC_CONVERTED: return .converted(out)
        case TIO_ICC_ALREADY_SRGB: return .alreadySRGB
        default: return .unusable(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }

    /// Whether converting from `profile` changes anything: it reads, and it is not an sRGB profile (a profile that
    /// does not read is ignored, the pixels taken as sRGB).
    static func needsConversion(_ profile: [UInt8]) -> Bool {
        profile.withUnsafeBytes { icc in tio_icc_describes_srgb(icc.baseAddress?.assumingMemoryBound(to: UInt8.self), icc.count) == 0 }
    }
}

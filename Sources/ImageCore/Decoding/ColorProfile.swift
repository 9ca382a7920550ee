import CImageOps

/// Embedded ICC profiles to sRGB (Little CMS through `CImageOps`), as libvips' thumbnailer does: pixels described by
/// an Adobe RGB, Display P3 or CMYK profile come out in sRGB, the colour space of the web and of every encoder here;
/// pixels without a profile are taken as sRGB. Thread-safety: callable from any thread; the transforms made are kept
/// and shared (`Conversion`).
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
        let conversion = Conversion.to(layout, from: profile)
        guard let converted = conversion.apply(pixels, layout: layout) else {
            return conversion.unusable.map { .unusable($0) } ?? .alreadySRGB
        }
        return .converted(converted)
    }

    /// What converting from one profile for one pixel layout takes: a Little CMS transform, or the reason there is
    /// none. Making a transform samples the profile's curves (about 7 ms for Adobe RGB on the Intel Xeon host, several
    /// times the conversion of a thumbnail's pixels), and photos share a few profiles (a camera's Adobe RGB, a phone's
    /// Display P3): the 32 used most recently are kept (`conversions`), by the profile's bytes and the layout.
    ///
    /// `@unchecked Sendable`: the transform is made without Little CMS's one-pixel cache, the condition its
    /// documentation gives for one transform applied by several threads at once, and is never changed after it is
    /// made; it is freed when the last reference goes.
    final class Conversion: @unchecked Sendable {
        private let transform: OpaquePointer?
        /// Why the profile cannot be used (nil when it converts, or is sRGB's already).
        let unusable: String?
        /// Whether applying it changes the pixels: the profile reads and is not sRGB's.
        var converts: Bool { transform != nil }

        private init(profile: [UInt8], layout: tio_pixels) {
            var made: OpaquePointer?
            var message = [CChar](repeating: 0, count: 256)
            let result = profile.withUnsafeBytes { icc in
                tio_icc_transform_make(icc.baseAddress?.assumingMemoryBound(to: UInt8.self), icc.count, layout, &made, &message, message.count)
            }
            transform = result == TIO_ICC_CONVERTED ? made : nil
            unusable = result == TIO_ICC_UNUSABLE
                ? String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
        }

        deinit { tio_icc_transform_free(transform) }

        /// `pixels` converted (the layout this conversion was made for), or nil when there is no transform. A method,
        /// so that the conversion outlives the C call that uses its transform (the cache may drop it meanwhile).
        func apply(_ pixels: [UInt8], layout: tio_pixels) -> [UInt8]? {
            guard let transform else { return nil }
            let count = pixels.count / (layout == TIO_PIXELS_RGB ? 3 : 4)
            var out = [UInt8](repeating: 0, count: count * (layout == TIO_PIXELS_RGBA ? 4 : 3))
            pixels.withUnsafeBufferPointer { input in
                out.withUnsafeMutableBufferPointer { output in
                    withExtendedLifetime(self) {
                        tio_icc_transform_apply(transform, input.baseAddress, output.baseAddress, count, layout)
                    }
                }
            }
            return out
        }

        private struct Key: Hashable, Sendable {
            let profile: [UInt8]
            let layout: UInt32
        }

        /// The 32 used most recently. The cost is the profile's bytes (a few hundred to a few thousand; one over 1 MiB
        /// is made for each image, never kept); the transforms themselves, tens to hundreds of kilobytes each (a CMYK
        /// profile's lookup table), are bounded by the count.
        private static let conversions = MemoryCache<Key, Conversion>(countLimit: 32, costLimit: 1 << 20)

        /// The conversion from `profile` for `layout`: the one kept, or a new one (then kept).
        static func to(_ layout: tio_pixels, from profile: [UInt8]) -> Conversion {
            let key = Key(profile: profile, layout: layout.rawValue)
            if let kept = conversions.value(forKey: key) { return kept }
            let made = Conversion(profile: profile, layout: layout)
            _ = conversions.set(made, forKey: key, cost: profile.count)
            return made
        }
    }

    /// Whether converting from `profile` changes anything: it reads, and it is not an sRGB profile (a profile that
    /// does not read is ignored, the pixels taken as sRGB).
    static func needsConversion(_ profile: [UInt8]) -> Bool {
        profile.withUnsafeBytes { icc in tio_icc_describes_srgb(icc.baseAddress?.assumingMemoryBound(to: UInt8.self), icc.count) == 0 }
    }
}

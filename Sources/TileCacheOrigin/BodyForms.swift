import COriginCodecs
public import ImageCore

extension BodyForm {
    /// `image` (RGB pixels) encoded in this form, as `Fault.body(self)` serves it.
    public func encode(_ image: DecodedImage, quality: Int = 85) -> [UInt8] {
        BodyForms.encode(image, as: self, quality: quality) {
            // Encoding generated RGB pixels of a valid size cannot fail short of running out of memory.
            do { return try JPEGEncoder.encode(image, quality: quality) } catch { fatalError("encoding failed: \(error)") }
        }
    }
}

/// Renders the origin's images in the forms of `BodyForm`.
///
/// Thread-safety: stateless; the C encoders allocate per call.
enum BodyForms {
    /// The bytes of `image` (the element's generated pixels) in `form`; `baseline` gives the image's baseline JPEG
    /// (the bytes the origin serves without faults), which `gzip` and the JPEG quirks start from.
    static func encode(_ image: DecodedImage, as form: BodyForm, quality: Int, baseline: () -> [UInt8]) -> [UInt8] {
        switch form {
        case .empty: return []
        case .png: return png(image, bitDepth: 8, interlaced: false)
        case .png16: return png(image, bitDepth: 16, interlaced: false)
        case .pngInterlaced: return png(image, bitDepth: 8, interlaced: true)
        case .pngBadCRC: return withBadIDATChecksum(png(image, bitDepth: 8, interlaced: false))
        case .pngTruncatedIDAT: return withHalfIDAT(png(image, bitDepth: 8, interlaced: false))
        case .gzip:
            let plain = baseline()
            return call { tco_gzip(plain, plain.count, $0, $1) }
        case .progressive: return jpeg(image, TCO_JPEG_PROGRESSIVE, quality: quality)
        case .gray: return jpeg(image, TCO_JPEG_GRAY, quality: quality)
        case .cmyk: return jpeg(image, TCO_JPEG_CMYK, quality: quality)
        case .jpegJunkBeforeDQT: return quirk("junk-before-dqt", of: baseline())
        case .jpegBogusDHTLength: return quirk("bogus-dht-length", of: baseline())
        }
    }

    /// The baseline JPEG with a quirk; its encoder always writes the DQT and DHT segments the quirks change.
    private static func quirk(_ name: String, of baseline: [UInt8]) -> [UInt8] {
        guard let bytes = JPEGQuirk.named(name)?.apply(to: baseline) else {
            fatalError("quirk \(name) does not apply to the origin's JPEG")
        }
        return bytes
    }

    private static func jpeg(_ image: DecodedImage, _ form: tco_jpeg_form, quality: Int) -> [UInt8] {
        call { tco_jpeg_encode(image.pixels, Int32(image.width), Int32(image.height), Int32(quality), form, $0, $1) }
    }

    private static func png(_ image: DecodedImage, bitDepth: Int32, interlaced: Bool) -> [UInt8] {
        call { tco_png_encode(image.pixels, Int32(image.width), Int32(image.height), bitDepth, interlaced ? 1 : 0, $0, $1) }
    }

    /// Runs a C encoder and copies its malloc'd output. The encoders fail only when memory runs out.
    private static func call(_ body: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<Int>) -> Int32) -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        guard body(&output, &size) == 0, let output else { fatalError("the origin's encoder failed (out of memory?)") }
        defer { tco_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }

    /// The PNG's chunks as (offset of the length field, type, data length).
    private static func chunks(_ png: [UInt8]) -> [(offset: Int, type: String, length: Int)] {
        var result: [(Int, String, Int)] = []
        var offset = 8
        while offset + 12 <= png.count {
            let length = png[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            result.append((offset, String(decoding: png[offset + 4..<offset + 8], as: UTF8.self), length))
            offset += 12 + length
        }
        return result
    }

    private static func withBadIDATChecksum(_ png: [UInt8]) -> [UInt8] {
        var png = png
        guard let idat = chunks(png).first(where: { $0.type == "IDAT" }) else { return png }
        png[idat.offset + 8 + idat.length + 3] ^= 0xFF
        return png
    }

    /// Signature, IHDR, the first half of the first IDAT (length and CRC rewritten), IEND.
    private static func withHalfIDAT(_ png: [UInt8]) -> [UInt8] {
        let all = chunks(png)
        guard let idat = all.first(where: { $0.type == "IDAT" }), let end = all.last, end.type == "IEND" else { return png }
        var result = Array(png[0..<idat.offset])
        let data = Array(png[idat.offset + 8..<idat.offset + 8 + idat.length / 2])
        result += bigEndian(UInt32(data.count))
        let typed = Array("IDAT".utf8) + data
        result += typed
        result += typed.withUnsafeBufferPointer { bigEndian(tco_crc32($0.baseAddress, $0.count)) }
        result += png[end.offset..<end.offset + 12]
        return result
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

import CImageOps
import CPNG

/// PNG header reading and decoding through libpng's simplified `png_image_*` API.
///
/// libpng reports errors by `longjmp`; the simplified API keeps the `setjmp` inside libpng (`png_safe_execute`), so
/// no jump ever crosses a Swift frame. Thread-safety: stateless, callable from any thread.
enum PNGCodec {
    /// Reads width and height straight from the IHDR chunk (bytes 16..<24), without libpng and without allocating.
    static func readIHDR(_ bytes: UnsafeRawBufferPointer, subject: String) throws(ImageCoreError) -> (width: Int, height: Int) {
        guard bytes.count >= 24 else {
            throw ImageCoreError(.truncated, subject: subject, message: "PNG ends before its IHDR chunk (\(bytes.count) bytes)")
        }
        guard bytes[12] == 0x49, bytes[13] == 0x48, bytes[14] == 0x44, bytes[15] == 0x52 else {
            throw ImageCoreError(.corrupt, subject: subject, message: "PNG does not start with an IHDR chunk")
        }
        return (uint32(bytes, at: 16), uint32(bytes, at: 20))
    }

    /// The big-endian 32-bit number at `offset` (PNG's sizes and chunk lengths).
    private static func uint32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int {
        (Int(bytes[offset]) << 24) | (Int(bytes[offset + 1]) << 16) | (Int(bytes[offset + 2]) << 8) | Int(bytes[offset + 3])
    }

    /// Decodes every row. `checkDimensions` runs after libpng has validated the header (IHDR CRC included) and
    /// before the pixel buffer is allocated.
    static func decode(
        _ bytes: UnsafeRawBufferPointer, subject: String, checkDimensions: (Int, Int) throws(ImageCoreError) -> Void
    ) throws(ImageCoreError) -> (DecodedImage, warnings: [String]) {
        try checkChunkLengths(bytes, subject: subject)
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        guard png_image_begin_read_from_memory(&image, bytes.baseAddress, bytes.count) != 0 else {
            let message = Self.message(of: &image)
            png_image_free(&image)
            throw ImageCoreError(classify(message), subject: subject, message: "PNG header invalid: \(message)")
        }
        var warnings: [String] = []
        if image.warning_or_error & UInt32(PNG_IMAGE_WARNING) != 0 { warnings.append(Self.message(of: &image)) }
        do {
            try checkDimensions(Int(image.width), Int(image.height))
        } catch {
            png_image_free(&image)
            throw error
        }
        let hasAlpha = image.format & UInt32(PNG_FORMAT_FLAG_ALPHA) != 0
        let hasColor = image.format & UInt32(PNG_FORMAT_FLAG_COLOR) != 0
        let pixelFormat: DecodedImage.PixelFormat = hasColor ? (hasAlpha ? .rgba : .rgb) : (hasAlpha ? .grayAlpha : .gray)
        // 8 bits per channel, sRGB, no colour map: libpng converts 16-bit, palette and low-bit-depth images.
        image.format = (hasAlpha ? UInt32(PNG_FORMAT_FLAG_ALPHA) : 0) | (hasColor ? UInt32(PNG_FORMAT_FLAG_COLOR) : 0)
        let width = Int(image.width), height = Int(image.height)
        var pixels = [UInt8](repeating: 0, count: width * height * pixelFormat.bytesPerPixel)
        image.warning_or_error = 0
        // A 16-bit PNG without gAMA/sRGB is sRGB-encoded, as every viewer shows it; libpng's default would treat its
        // samples as linear and darken them on the way to 8 bits. (begin_read clears `flags`, so it is set here.)
        image.flags |= UInt32(PNG_IMAGE_FLAG_16BIT_sRGB)
        let ok = pixels.withUnsafeMutableBytes { out in
            png_image_finish_read(&image, nil, out.baseAddress, 0, nil)
        }
        let message = Self.message(of: &image)
        guard ok != 0, image.warning_or_error & UInt32(PNG_IMAGE_ERROR) == 0 else {
            png_image_free(&image)
            throw ImageCoreError(classify(message), subject: subject, message: "PNG decode failed: \(message)")
        }
        if image.warning_or_error & UInt32(PNG_IMAGE_WARNING) != 0, !warnings.contains(message) { warnings.append(message) }
        png_image_free(&image)
        return (DecodedImage(width: width, height: height, pixelFormat: pixelFormat, pixels: pixels), warnings)
    }

    /// Fails with `.truncated` when a chunk declares more data than the file holds, before libpng sees it: libpng
    /// allocates a chunk's declared length before reading it, so a 787-byte file whose text chunk claims 2 GB made it
    /// allocate 2 GB (found by `make fuzz`). Stops at IEND; what follows IEND is not the image's.
    static func checkChunkLengths(_ bytes: UnsafeRawBufferPointer, subject: String) throws(ImageCoreError) {
        var offset = 8
        while offset + 8 <= bytes.count {
            let length = uint32(bytes, at: offset)
            let type = UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 8)])
            guard length <= bytes.count - offset - 12 else {
                throw ImageCoreError(.truncated, subject: subject, message: """
                    PNG chunk '\(chunkName(type))' at byte \(offset) declares \(length) bytes of data, but only \(bytes.count - offset - 8) \
                    bytes follow its header
                    """)
            }
            if type.elementsEqual("IEND".utf8) { return }
            offset += 12 + length
        }
    }

    /// A chunk type as people read it: its four bytes as ASCII letters, a byte that is not printable ASCII (or is a
    /// backslash) as `\xNN`, so `tEXt` stays `tEXt` and a damaged type reads `a\x01\xFFZ`.
    static func chunkName(_ type: UnsafeRawBufferPointer) -> String {
        type.map { byte in
            guard (0x20...0x7E).contains(byte), byte != UInt8(ascii: "\\") else {
                let digits = String(byte, radix: 16, uppercase: true)
                return "\\x" + (digits.count == 1 ? "0" + digits : digits)
            }
            return String(UnicodeScalar(byte))
        }.joined()
    }

    /// The ICC profile of the iCCP chunk (name, NUL, compression method 0, a zlib stream), inflated; nil when there is
    /// none before the first IDAT or it is damaged (the image is then taken as sRGB, as libpng's simplified API, which
    /// skips iCCP, does anyway). Profiles above 4 MiB are ignored.
    static func iccProfile(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        var offset = 8
        while offset + 12 <= bytes.count {
            let length = uint32(bytes, at: offset)
            guard length <= bytes.count - offset - 12 else { return nil }
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if type == "IDAT" || type == "IEND" { return nil }
            if type == "iCCP" {
                let data = bytes[(offset + 8)..<(offset + 8 + length)]
                guard let nul = data.firstIndex(of: 0), nul + 2 <= data.endIndex, data[nul + 1] == 0 else { return nil }
                let stream = UnsafeRawBufferPointer(rebasing: data[(nul + 2)...])
                var out = [UInt8](repeating: 0, count: 4 * 1024 * 1024)
                var size = out.count
                let status = out.withUnsafeMutableBufferPointer { target in
                    tio_inflate(stream.baseAddress?.assumingMemoryBound(to: UInt8.self), stream.count, target.baseAddress, &size)
                }
                guard status == 0 else { return nil }
                out.removeLast(out.count - size)
                return out
            }
            offset += 12 + length
        }
        return nil
    }

    /// libpng's messages for data that ends early, as opposed to damaged data.
    static func classify(_ message: String) -> ImageCoreError.Reason {
        let lowered = message.lowercased()
        let endings = ["end of data", "not enough image data", "read error", "unexpected end", "truncated", "eof"]
        return endings.contains(where: lowered.contains) ? .truncated : .corrupt
    }

    private static func message(of image: inout png_image) -> String {
        let text = withUnsafeBytes(of: &image.message) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return String(decoding: bytes, as: UTF8.self)
        }
        return withChunkNameSpelledOut(text)
    }

    /// libpng's message with the chunk name it starts with written as `chunkName` writes it: libpng puts every byte
    /// that is not a letter in brackets as hex (`Q[01][E9]t: invalid chunk type`), which becomes `Q\x01\xE9t`. Other
    /// messages are returned as they are.
    static func withChunkNameSpelledOut(_ message: String) -> String {
        var type: [UInt8] = []
        var rest = Substring(message)
        while type.count < 4 {
            if let letter = rest.first, letter.isASCII, letter.isLetter {
                type.append(letter.asciiValue!)
                rest = rest.dropFirst()
            } else if rest.count >= 4, rest.first == "[", rest.dropFirst(3).first == "]",
                      let byte = UInt8(rest.dropFirst().prefix(2), radix: 16) {
                type.append(byte)
                rest = rest.dropFirst(4)
            } else {
                return message
            }
        }
        guard rest.hasPrefix(": ") else { return message }
        return type.withUnsafeBytes { chunkName($0) } + rest
    }
}

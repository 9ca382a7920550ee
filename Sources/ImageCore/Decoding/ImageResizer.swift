/// Makes resized JPEG variants of validated images.
///
/// JPEGs are decoded straight to a reduced size with libjpeg's DCT scaling (n/8 for n = 1...8), choosing
/// the smallest scaled size still at least as wide as the target; the rest is done by an area-averaging (downscale)
/// or bilinear (upscale) resample, then the result is encoded. PNGs are fully decoded first; alpha is composited over
/// white. Thread-safety: stateless, callable from any task.
public enum ImageResizer {
    /// Narrowest and widest widths accepted.
    public static let widthRange = 16...1024

    /// A JPEG of `bytes` resized to exactly `width` pixels wide (height keeps the aspect ratio, at least 1).
    ///
    /// - Throws: `.dimensions` for a width outside `widthRange`; the inspector's errors for bytes that do not decode.
    public static func resizedJPEG(_ bytes: [UInt8], width: Int, quality: Int = 85, subject: String,
                                   inspector: ImageInspector = ImageInspector(strictness: .lenient)) throws(ImageCoreError) -> ResizedImage {
        try checkWidth(width, subject: subject)
        return try resized(decode(bytes, forWidth: width, subject: subject, inspector: inspector), width: width, quality: quality, subject: subject)
    }

    /// The pixels of `bytes`, for a resize to `width`: a JPEG decoded straight to the smallest DCT scale (n/8) still at
    /// least `width` wide, a PNG decoded in full.
    ///
    /// - Throws: the inspector's errors for bytes that do not decode.
    public static func decode(_ bytes: [UInt8], forWidth width: Int, subject: String,
                              inspector: ImageInspector = ImageInspector(strictness: .lenient)) throws(ImageCoreError) -> DecodedImage {
        guard ImageFormat.sniff(bytes) == .jpeg else { return try inspector.validate(bytes, subject: subject).image }
        return try bytes.withRawBytes { raw throws(ImageCoreError) in
            try JPEGCodec.decode(raw, strict: false, subject: subject, minimumWidth: width) { width, height throws(ImageCoreError) in
                try inspector.checkDimensions(width, height, subject: subject)  // before any allocation
            }.image
        }
    }

    /// `source` resized to exactly `width` pixels wide (alpha composited over white), encoded as JPEG.
    ///
    /// - Throws: `.dimensions` for a width outside `widthRange`.
    public static func resized(_ source: DecodedImage, width: Int, quality: Int = 85, subject: String) throws(ImageCoreError) -> ResizedImage {
        try checkWidth(width, subject: subject)
        let flattened = source.flattenedOverWhite()
        let height = max(1, (flattened.height * width + flattened.width / 2) / flattened.width)
        let resized = flattened.resampled(width: width, height: height)
        return ResizedImage(bytes: try JPEGCodec.encode(resized, quality: quality), image: resized)
    }

    private static func checkWidth(_ width: Int, subject: String) throws(ImageCoreError) {
        guard widthRange.contains(width) else {
            throw ImageCoreError(.dimensions, subject: subject, message: "width \(width) is outside \(widthRange.lowerBound)...\(widthRange.upperBound)")
        }
    }
}

/// A resized JPEG.
public struct ResizedImage: Sendable {
    /// The JPEG bytes.
    public var bytes: [UInt8]
    /// The resized pixels the bytes encode.
    public var image: DecodedImage
    /// Width in pixels.
    public var width: Int { image.width }
    /// Height in pixels.
    public var height: Int { image.height }
}

extension DecodedImage {
    /// Gray or RGB: alpha composited over white.
    func flattenedOverWhite() -> DecodedImage {
        switch pixelFormat {
        case .gray, .rgb: return self
        case .grayAlpha, .rgba:
            let channels = pixelFormat == .rgba ? 3 : 1
            let stride = pixelFormat.bytesPerPixel
            var out = [UInt8](repeating: 0, count: width * height * channels)
            for pixel in 0..<(width * height) {
                let alpha = Int(pixels[pixel * stride + stride - 1])
                for channel in 0..<channels {
                    let value = Int(pixels[pixel * stride + channel])
                    out[pixel * channels + channel] = UInt8((value * alpha + 255 * (255 - alpha) + 127) / 255)
                }
            }
            return DecodedImage(width: width, height: height, pixelFormat: channels == 3 ? .rgb : .gray, pixels: out)
        }
    }

    /// The image resampled to `width` x `height`: area averaging where it shrinks, bilinear where it grows.
    func resampled(width newWidth: Int, height newHeight: Int) -> DecodedImage {
        if newWidth == width && newHeight == height { return self }
        let channels = pixelFormat.bytesPerPixel
        var out = [UInt8](repeating: 0, count: newWidth * newHeight * channels)
        let scaleX = Double(width) / Double(newWidth), scaleY = Double(height) / Double(newHeight)
        pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                for y in 0..<newHeight {
                    for x in 0..<newWidth {
                        for channel in 0..<channels {
                            let value: Double
                            if scaleX >= 1 && scaleY >= 1 {
                                // Average the source box this pixel covers.
                                let x0 = Int(Double(x) * scaleX), x1 = max(x0 + 1, min(width, Int(Double(x + 1) * scaleX)))
                                let y0 = Int(Double(y) * scaleY), y1 = max(y0 + 1, min(height, Int(Double(y + 1) * scaleY)))
                                var sum = 0
                                for sy in y0..<y1 { for sx in x0..<x1 { sum += Int(source[(sy * width + sx) * channels + channel]) } }
                                value = Double(sum) / Double((x1 - x0) * (y1 - y0))
                            } else {
                                let fx = max(0, (Double(x) + 0.5) * scaleX - 0.5), fy = max(0, (Double(y) + 0.5) * scaleY - 0.5)
                                let x0 = min(width - 1, Int(fx)), y0 = min(height - 1, Int(fy))
                                let x1 = min(width - 1, x0 + 1), y1 = min(height - 1, y0 + 1)
                                let dx = fx - Double(x0), dy = fy - Double(y0)
                                func at(_ px: Int, _ py: Int) -> Double { Double(source[(py * width + px) * channels + channel]) }
                                value = (at(x0, y0) * (1 - dx) + at(x1, y0) * dx) * (1 - dy) + (at(x0, y1) * (1 - dx) + at(x1, y1) * dx) * dy
                            }
                            target[(y * newWidth + x) * channels + channel] = UInt8(max(0, min(255, value.rounded())))
                        }
                    }
                }
            }
        }
        return DecodedImage(width: newWidth, height: newHeight, pixelFormat: pixelFormat, pixels: out)
    }
}

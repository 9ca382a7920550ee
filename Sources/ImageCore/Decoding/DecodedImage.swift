/// Pixels of a fully decoded image, 8 bits per channel, rows packed with no padding.
public struct DecodedImage: Sendable {
    /// The channel layout of `pixels`.
    public enum PixelFormat: String, Sendable, Codable {
        /// One byte per pixel.
        case gray
        /// Gray and alpha, two bytes per pixel.
        case grayAlpha
        /// Red, green, blue: three bytes per pixel.
        case rgb
        /// Red, green, blue, alpha: four bytes per pixel.
        case rgba

        /// Bytes per pixel.
        public var bytesPerPixel: Int {
            switch self {
            case .gray: 1
            case .grayAlpha: 2
            case .rgb: 3
            case .rgba: 4
            }
        }
    }

    /// Width in pixels (> 0).
    public let width: Int
    /// Height in pixels (> 0).
    public let height: Int
    /// Channel layout.
    public let pixelFormat: PixelFormat
    /// `height` rows of `width * pixelFormat.bytesPerPixel` bytes.
    public let pixels: [UInt8]

    /// Creates an image; `pixels.count` must equal `width * height * pixelFormat.bytesPerPixel`.
    public init(width: Int, height: Int, pixelFormat: PixelFormat, pixels: [UInt8]) {
        precondition(pixels.count == width * height * pixelFormat.bytesPerPixel, "pixel buffer size mismatch")
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.pixels = pixels
    }

    /// Bytes per row.
    public var bytesPerRow: Int { width * pixelFormat.bytesPerPixel }

    /// RGBA pixels as an image: RGB when every pixel is opaque (what a canvas composed of frames or a fill becomes).
    static func fromRGBA(width: Int, height: Int, pixels: [UInt8]) -> DecodedImage {
        guard stride(from: 3, to: pixels.count, by: 4).allSatisfy({ pixels[$0] == 255 }) else {
            return DecodedImage(width: width, height: height, pixelFormat: .rgba, pixels: pixels)
        }
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        for pixel in 0..<(width * height) {
            rgb[pixel * 3] = pixels[pixel * 4]
            rgb[pixel * 3 + 1] = pixels[pixel * 4 + 1]
            rgb[pixel * 3 + 2] = pixels[pixel * 4 + 2]
        }
        return DecodedImage(width: width, height: height, pixelFormat: .rgb, pixels: rgb)
    }

    /// The memory-cache cost of this image: its decoded pixel bytes.
    public var cost: Int { pixels.count }
}

/// What the header of an image says, read without decoding the pixels.
public struct ImageHeader: Sendable, Hashable, Codable {
    /// The format sniffed from the magic bytes.
    public var format: ImageFormat
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Size of the encoded bytes.
    public var byteCount: Int
    /// The EXIF orientation (1...8) a JPEG declares, nil when it declares none: `width` and `height` are the stored
    /// pixels', `uprightWidth` and `uprightHeight` what a viewer shows.
    public var orientation: Int?

    /// A header with the given facts.
    public init(format: ImageFormat, width: Int, height: Int, byteCount: Int, orientation: Int? = nil) {
        self.format = format
        self.width = width
        self.height = height
        self.byteCount = byteCount
        self.orientation = orientation
    }

    /// Whether the orientation swaps width and height (5...8: the stored image is rotated a quarter turn).
    public var isTransposed: Bool { (orientation ?? 1) >= 5 }
    /// The width a viewer shows, the orientation applied.
    public var uprightWidth: Int { isTransposed ? height : width }
    /// The height a viewer shows, the orientation applied.
    public var uprightHeight: Int { isTransposed ? width : height }

    /// The EXIF orientation (1-8) of HEIF's transforms: `irot` (`turns` quarter turns anticlockwise) followed by an
    /// optional `imir` (mode 0: top and bottom exchanged; 1: left and right), as AVIF and HEIC apply them.
    public static func exifOrientation(heifQuarterTurns turns: Int, mirrorMode: Int?) -> Int {
        switch (turns & 3, mirrorMode) {
        case (0, nil): 1
        case (0, 1?): 2
        case (0, _): 4
        case (1, nil): 8
        case (1, 1?): 7
        case (1, _): 5
        case (2, nil): 3
        case (2, 1?): 4
        case (2, _): 2
        case (_, nil): 6
        case (_, 1?): 5
        default: 7
        }
    }
}

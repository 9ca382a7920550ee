/// What to make of a source image before it is returned: a size, how the size is reached, and the encoding.
///
/// Every option is a field here, and every key derives from all of them (`ImageKey`: memory, disk, shared store,
/// ETag), so two requests that differ in any option never share a variant, and two spellings of the same options
/// (`w=64&dpr=2` and `w=128`) do. Options that describe the same output are normalised when parsed
/// (`dpr` multiplies `width` and `height`; the default quality is stored as nil).
public struct ImageProcessing: Sendable, Hashable {
    /// How the source is fitted to `width` x `height` when both are given.
    public enum Fit: String, Sendable, Hashable, CaseIterable, Codable {
        /// Keep the aspect ratio, as large as fits inside the box (the default; imgproxy's `fit`, CSS `contain`).
        case inside
        /// Keep the aspect ratio, fill the box, crop what overflows around the centre (imgproxy's `fill`, CSS `cover`).
        case cover
        /// Stretch to exactly the box, aspect ratio not kept (imgproxy's `force`, CSS `fill`).
        case fill
    }

    /// The encodings a variant can be made in.
    public enum OutputFormat: String, Sendable, Hashable, CaseIterable, Codable {
        case jpeg, png, webp

        /// The format sniffed from the bytes this encoding makes.
        public var imageFormat: ImageFormat {
            switch self {
            case .jpeg: .jpeg
            case .png: .png
            case .webp: .webp
            }
        }
    }

    /// Largest output side, in pixels.
    public static let maxSide = 4096
    /// Largest output area, in pixels (16 MP).
    public static let maxPixels = 16_000_000
    /// Quality of JPEG and WebP output when none is asked for (imgproxy's, thumbor's and Cloudinary's default range).
    public static let defaultQuality = 82
    /// What an output format of nil becomes: JPEG, or PNG when the source has an alpha channel.
    public static func defaultFormat(sourceHasAlpha: Bool) -> OutputFormat { sourceHasAlpha ? .png : .jpeg }

    /// The box's width in output pixels (`dpr` applied); nil: from the height, or the source's.
    public var width: Int?
    /// The box's height in output pixels (`dpr` applied); nil: from the width, or the source's.
    public var height: Int?
    /// How the source is fitted to the box (matters only when both sides are given).
    public var fit: Fit
    /// Whether a box larger than the source enlarges it (default: no, the source's size is kept, as imgproxy does).
    public var enlarge: Bool
    /// JPEG and WebP quality, 1...100; nil: `defaultQuality`.
    public var quality: Int?
    /// The encoding; nil: `defaultFormat(sourceHasAlpha:)`.
    public var format: OutputFormat?

    /// Processing with the given options (none: the original bytes).
    public init(width: Int? = nil, height: Int? = nil, fit: Fit = .inside, enlarge: Bool = false, quality: Int? = nil,
                format: OutputFormat? = nil) {
        self.width = width
        self.height = height
        self.fit = fit
        self.enlarge = enlarge
        self.quality = quality == Self.defaultQuality ? nil : quality
        self.format = format
    }

    /// No processing: the original, validated bytes.
    public static let none = ImageProcessing()

    /// Whether this returns the source unchanged.
    public var isNone: Bool { self == .none }

    /// The quality to encode with.
    public var effectiveQuality: Int { quality ?? Self.defaultQuality }

    /// The options in a fixed order, defaults left out: `w=64`, `w=64&h=64&fit=cover&f=webp` (what `ImageKey.cacheKey`
    /// puts after a variant's URL).
    public var canonicalQuery: String {
        var parts: [String] = []
        if let width { parts.append("w=\(width)") }
        if let height { parts.append("h=\(height)") }
        if fit != .inside { parts.append("fit=\(fit.rawValue)") }
        if enlarge { parts.append("enlarge=1") }
        if let quality { parts.append("q=\(quality)") }
        if let format { parts.append("f=\(format.rawValue)") }
        return parts.joined(separator: "&")
    }

    /// Bumped whenever the same options make different pixels (a new filter, orientation, colour conversion).
    static let revision = 2
}

/// Where a variant's pixels come from in the (upright) source and how large it is: the result of fitting an
/// `ImageProcessing` to one source size.
public struct ProcessingGeometry: Sendable, Hashable {
    /// The part of the upright source used: all of it, or the centred crop of `cover`. Fractional: a crop keeps the
    /// exact aspect ratio of the box.
    public var cropX: Double, cropY: Double, cropWidth: Double, cropHeight: Double
    /// The output size.
    public var width: Int, height: Int

    /// The geometry of `processing` for an upright source of `sourceWidth` x `sourceHeight`.
    public init(_ processing: ImageProcessing, sourceWidth: Int, sourceHeight: Int) {
        let sw = Double(sourceWidth), sh = Double(sourceHeight)
        (cropX, cropY, cropWidth, cropHeight) = (0, 0, sw, sh)
        let limit = processing.enlarge ? Double.infinity : 1
        func rounded(_ value: Double) -> Int { max(1, Int(value.rounded())) }
        switch (processing.width, processing.height) {
        case (nil, nil):
            (width, height) = (sourceWidth, sourceHeight)
        case (let w?, nil):
            let scale = min(Double(w) / sw, limit)
            (width, height) = (rounded(sw * scale), rounded(sh * scale))
        case (nil, let h?):
            let scale = min(Double(h) / sh, limit)
            (width, height) = (rounded(sw * scale), rounded(sh * scale))
        case (let w?, let h?):
            let bw = Double(w), bh = Double(h)
            switch processing.fit {
            case .inside:
                let scale = min(bw / sw, bh / sh, limit)
                (width, height) = (rounded(sw * scale), rounded(sh * scale))
            case .fill:
                (width, height) = (rounded(min(bw, sw * limit)), rounded(min(bh, sh * limit)))
            case .cover:
                // The largest centred part of the source with the box's aspect ratio, scaled to the box (or kept at
                // its own size when that would enlarge it).
                let scale = max(bw / sw, bh / sh)
                (cropWidth, cropHeight) = (min(sw, bw / scale), min(sh, bh / scale))
                (cropX, cropY) = ((sw - cropWidth) / 2, (sh - cropHeight) / 2)
                let shrink = min(scale, limit)
                (width, height) = (rounded(cropWidth * shrink), rounded(cropHeight * shrink))
            }
        }
    }

    /// Whether the output is the whole source at its own size.
    public func isIdentity(sourceWidth: Int, sourceHeight: Int) -> Bool {
        width == sourceWidth && height == sourceHeight && cropWidth == Double(sourceWidth) && cropHeight == Double(sourceHeight)
    }
}

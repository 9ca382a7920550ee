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
        /// imgproxy's `fill`: scale to cover the box and crop what overflows; when the source is too small to cover it
        /// and `enlarge` is off, the box is cut to the source's scaled size (the result may not keep the box's ratio,
        /// where `cover`, imgproxy's `fill-down`, would).
        case coverClipped = "cover-clipped"
        /// imgproxy's `auto`: `coverClipped` when the source and the box are both landscape (or square) or both
        /// portrait, `inside` otherwise.
        case auto
    }

    /// Where a crop (`cover`, `coverClipped`) is taken from: imgproxy's gravity.
    public struct Gravity: Sendable, Hashable, Codable {
        /// The side or corner the crop keeps, or a focal point.
        public enum Anchor: String, Sendable, Hashable, CaseIterable, Codable {
            case centre = "ce", north = "no", south = "so", east = "ea", west = "we"
            case northEast = "noea", northWest = "nowe", southEast = "soea", southWest = "sowe"
            /// `x` and `y` are the point's place in the source, each 0...1: the crop is centred on it where it can be.
            case focusPoint = "fp"
        }

        public var anchor: Anchor
        /// Offsets from the anchor (away from its sides, as imgproxy counts them): output pixels when at least 1 in
        /// size, a fraction of the scaled source otherwise. For `focusPoint`, the point.
        public var x: Double, y: Double

        public init(_ anchor: Anchor = .centre, x: Double = 0, y: Double = 0) {
            (self.anchor, self.x, self.y) = (anchor, x, y)
        }

        public static let centre = Gravity()

        /// imgproxy's spelling: `ce`, `no:10:0`, `fp:0.3:0.6`.
        public var text: String {
            x == 0 && y == 0 && anchor != .focusPoint ? anchor.rawValue : "\(anchor.rawValue):\(Self.number(x)):\(Self.number(y))"
        }

        private static func number(_ value: Double) -> String {
            value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        }
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
    /// Where a crop is taken from (default: the centre).
    public var gravity: Gravity

    /// Processing with the given options (none: the original bytes).
    public init(width: Int? = nil, height: Int? = nil, fit: Fit = .inside, enlarge: Bool = false, quality: Int? = nil,
                format: OutputFormat? = nil, gravity: Gravity = .centre) {
        self.gravity = gravity
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
        if gravity != .centre { parts.append("g=\(gravity.text)") }
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
            var fit = processing.fit
            if fit == .auto {
                // imgproxy's rule: both landscape-or-square, or both portrait, fill; otherwise fit.
                fit = (sw - sh >= 0) == (bw - bh >= 0) ? .coverClipped : .inside
            }
            switch fit {
            case .inside, .auto:
                let scale = min(bw / sw, bh / sh, limit)
                (width, height) = (rounded(sw * scale), rounded(sh * scale))
            case .fill:
                (width, height) = (rounded(min(bw, sw * limit)), rounded(min(bh, sh * limit)))
            case .cover:
                // The largest part of the source with the box's aspect ratio, scaled to the box (or kept at its own
                // size when that would enlarge it).
                let scale = max(bw / sw, bh / sh)
                (cropWidth, cropHeight) = (min(sw, bw / scale), min(sh, bh / scale))
                let shrink = min(scale, limit)
                (width, height) = (rounded(cropWidth * shrink), rounded(cropHeight * shrink))
                (cropX, cropY) = Self.place(cropWidth, cropHeight, in: sw, sh, gravity: processing.gravity, scale: shrink)
            case .coverClipped:
                // imgproxy's fill: the whole source scaled to cover the box (never enlarged without `enlarge`), then
                // the box cut from it, the box itself cut to the scaled source when that is smaller.
                let scale = min(max(bw / sw, bh / sh), limit)
                (width, height) = (min(w, rounded(sw * scale)), min(h, rounded(sh * scale)))
                (cropWidth, cropHeight) = (min(sw, Double(width) / scale), min(sh, Double(height) / scale))
                (cropX, cropY) = Self.place(cropWidth, cropHeight, in: sw, sh, gravity: processing.gravity, scale: scale)
            }
        }
    }

    /// Where a crop of `inner` x `innerHeight` source pixels sits in the source, as imgproxy's gravity places it in the
    /// scaled image (`scale` output pixels per source pixel), kept inside the source.
    static func place(_ inner: Double, _ innerHeight: Double, in outer: Double, _ outerHeight: Double, gravity: ImageProcessing.Gravity,
                      scale: Double) -> (Double, Double) {
        func offset(_ value: Double, _ size: Double) -> Double { abs(value) >= 1 ? value / scale : value * size }
        var left = (outer - inner) / 2, top = (outerHeight - innerHeight) / 2
        switch gravity.anchor {
        case .focusPoint:
            left = gravity.x * outer - inner / 2
            top = gravity.y * outerHeight - innerHeight / 2
        default:
            let dx = offset(gravity.x, outer), dy = offset(gravity.y, outerHeight)
            left += dx
            top += dy
            if [.north, .northEast, .northWest].contains(gravity.anchor) { top = dy }
            if [.south, .southEast, .southWest].contains(gravity.anchor) { top = outerHeight - innerHeight - dy }
            if [.east, .northEast, .southEast].contains(gravity.anchor) { left = outer - inner - dx }
            if [.west, .northWest, .southWest].contains(gravity.anchor) { left = dx }
        }
        return (max(0, min(left, outer - inner)), max(0, min(top, outerHeight - innerHeight)))
    }

    /// Whether the output is the whole source at its own size.
    public func isIdentity(sourceWidth: Int, sourceHeight: Int) -> Bool {
        width == sourceWidth && height == sourceHeight && cropWidth == Double(sourceWidth) && cropHeight == Double(sourceHeight)
    }
}

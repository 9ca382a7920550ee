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
            /// imgproxy's `sm` (thumbor's `smart/`): the crop is centred on the image's point of attention (edges, skin,
            /// saturation: libvips' attention strategy, `Attention`), found in its pixels when the variant is made.
            case smart = "sm"

            /// The side the anchor keeps across: -1 west, 1 east, 0 neither.
            var horizontal: Int {
                switch self {
                case .west, .northWest, .southWest: -1
                case .east, .northEast, .southEast: 1
                default: 0
                }
            }

            /// The side the anchor keeps up and down: -1 north, 1 south, 0 neither.
            var vertical: Int {
                switch self {
                case .north, .northEast, .northWest: -1
                case .south, .southEast, .southWest: 1
                default: 0
                }
            }
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
        case jpeg, png, webp, avif
        /// Not an encoding: the variant's placeholder (`ImagePlaceholder`) as JSON, made from the variant's pixels
        /// (`ImageProcessing.placeholder(of:)`).
        case placeholder

        /// The image encodings, every case but `placeholder`.
        public static let encodings: [OutputFormat] = [.jpeg, .png, .webp, .avif]

        /// The encoding a name or a file extension means: a raw value or `jpg`, in any case; nil for any other, and
        /// for `placeholder` (the one reading of format names: the query's `format`, imgproxy's `f`, thumbor's
        /// `format()`, the CLI's options).
        public init?(name: String) {
            let lower = name.lowercased()
            guard let format = Self(rawValue: lower == "jpg" ? "jpeg" : lower), format != .placeholder else { return nil }
            self = format
        }

        /// The names `init(name:)` reads, for messages.
        public static let names = "jpeg (jpg), png, webp, avif"

        /// The format sniffed from the bytes this encoding makes.
        public var imageFormat: ImageFormat {
            switch self {
            case .jpeg: .jpeg
            case .png: .png
            case .webp: .webp
            case .avif: .avif
            case .placeholder: .placeholder
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
    /// Output pixels per CSS pixel of `width` and `height`, as imgproxy's `dpr` (default 1). TileCache's own query
    /// options fold `dpr` into the sizes; imgproxy URLs keep it, because without `enlarge` imgproxy lowers it for a
    /// source smaller than the box rather than give up the box's shape.
    public var dpr: Double
    /// Each side of the box is first cut to the source's (thumbor's `no_upscale()`: a 300x200 box on a 126x126 source
    /// is a 126x126 box). Default false.
    public var boxCappedToSource = false
    /// Whose rules place a `cover` crop: imgproxy's (in the scaled image, the default) or thumbor's (in the source, in
    /// whole pixels, around the alignment's focal point), so each URL family answers the pixels its server would.
    public var cropRule = CropRule.imgproxy

    /// See `cropRule`.
    public enum CropRule: String, Sendable, Hashable, Codable {
        case imgproxy, thumbor
    }

    /// A region of the upright source cut out before anything else, in source pixels (thumbor's `AxB:CxD`): clamped to
    /// the source as thumbor clamps it; one that is empty once clamped is ignored, as thumbor ignores it.
    public var sourceCrop: SourceCrop?
    /// thumbor's `full-fit-in`: the box is covered rather than contained (one side may exceed it), and a smaller source
    /// is enlarged. With `cropRule == .thumbor` and `fit == .inside` (thumbor's `fit-in`).
    public var fitInFull = false
    /// thumbor's `adaptive-fit-in`: the box is turned a quarter when its orientation (portrait or landscape) is not the
    /// source's. With `cropRule == .thumbor` and `fit == .inside`.
    public var fitInAdaptive = false
    /// The output mirrored left to right (thumbor's `-WxH`).
    public var flipHorizontal = false
    /// The output mirrored top to bottom (thumbor's `Wx-H`).
    public var flipVertical = false
    /// thumbor's `fill()`: the output is the box (where a side is 0, the image's), the image centred on a canvas of a
    /// colour, of the image's mean colour (`fill(auto)`), or of the image itself blurred and stretched (`fill(blur)`).
    public var canvas: Canvas?

    /// See `canvas`.
    public enum Canvas: Sendable, Hashable, Codable {
        /// One colour (RGBA).
        case color(Color)
        /// thumbor's `auto`: the mean of the resized image's red, green and blue (integer division), opaque.
        case meanColor
        /// thumbor's `blur`: the resized image blurred (a 101-tap Gaussian, sigma 50, edges repeated, each pass
        /// truncated) and resized to the canvas.
        case blurredImage

        /// Its spelling in keys: `rrggbbaa`, `auto` or `blur`.
        public var text: String {
            switch self {
            case .color(let color): color.hex
            case .meanColor: "auto"
            case .blurredImage: "blur"
            }
        }
    }
    /// With `canvas`: whether the canvas shows through the image's transparent pixels (thumbor's `fill(colour, true)`);
    /// otherwise they stay as they are.
    public var canvasUnderTransparency = false
    /// thumbor's `max_bytes(N)`: a JPEG or WebP larger than N bytes is encoded again at 75% of the quality, and again,
    /// until it fits; when the quality would fall below 10, the first encoding is kept.
    public var maxBytes: Int?

    /// thumbor's `trim`: the source is first cut to the box of pixels that differ from the top-left (or bottom-right)
    /// pixel by more than the tolerance (Euclidean distance over the channels, as thumbor's `_bounding_box`).
    public var trim: Trim?

    /// See `trim`.
    public struct Trim: Sendable, Hashable, Codable {
        public var fromBottomRight: Bool
        public var tolerance: Int
        public init(fromBottomRight: Bool = false, tolerance: Int = 0) {
            (self.fromBottomRight, self.tolerance) = (fromBottomRight, tolerance)
        }
    }

    /// imgproxy's `min-width`/`min-height`: the scale is raised until the result is at least this wide/high (the box
    /// still crops it where it is smaller).
    public var minWidth: Int?
    /// See `minWidth`.
    public var minHeight: Int?
    /// imgproxy's `crop:W:H:gravity`: a region of the upright source taken before the resize, W and H in pixels (1 and
    /// above) or fractions of the source (below 1), 0 for the whole side, placed by its gravity (nil: `gravity`).
    public var regionCrop: RegionCrop?
    /// imgproxy's `extend:1:gravity`: a result smaller than the box is placed on a transparent canvas of the box's size
    /// by this gravity (then flattened over `background` where the format has no alpha or one is given).
    public var extend: Gravity?
    /// imgproxy's `background`: the colour transparent pixels are flattened over, in every format (without it, only
    /// JPEG is flattened, over white).
    public var background: Color?

    /// See `regionCrop`.
    public struct RegionCrop: Sendable, Hashable, Codable {
        public var width: Double, height: Double
        public var gravity: Gravity?
        public init(width: Double, height: Double, gravity: Gravity? = nil) {
            (self.width, self.height, self.gravity) = (width, height, gravity)
        }
        /// imgproxy's `CalcCropSize`: 0 is none, 1 and above whole pixels, below 1 a share of `side` (at least 1).
        static func size(_ crop: Double, of side: Int) -> Int {
            crop == 0 ? 0 : crop >= 1 ? Int(min(crop, Double(1 << 30))) : max(1, ProcessingGeometry.round(Double(side) * crop))
        }

        /// The region's size in a source of `sourceWidth` x `sourceHeight`: each side as `size(_:of:)` says, the whole
        /// side where that is 0, at most the source's.
        public func size(sourceWidth: Int, sourceHeight: Int) -> (width: Int, height: Int) {
            let width = Self.size(self.width, of: sourceWidth), height = Self.size(self.height, of: sourceHeight)
            return (width == 0 ? sourceWidth : min(width, sourceWidth), height == 0 ? sourceHeight : min(height, sourceHeight))
        }
    }

    /// See `sourceCrop`.
    public struct SourceCrop: Sendable, Hashable, Codable {
        public var left: Int, top: Int, right: Int, bottom: Int
        public init(left: Int, top: Int, right: Int, bottom: Int) {
            (self.left, self.top, self.right, self.bottom) = (left, top, right, bottom)
        }
    }

    /// An sRGB colour with alpha, 8 bits a channel.
    public struct Color: Sendable, Hashable, Codable {
        public var red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8
        public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
            (self.red, self.green, self.blue, self.alpha) = (red, green, blue, alpha)
        }
        public static let white = Color(red: 255, green: 255, blue: 255)
        public static let transparent = Color(red: 0, green: 0, blue: 0, alpha: 0)

        /// `rrggbbaa` in lowercase hex.
        public var hex: String {
            let digits = Array("0123456789abcdef")
            return String([red, green, blue, alpha].flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
        }
    }

    /// Processing with the given options (none: the original bytes).
    public init(width: Int? = nil, height: Int? = nil, fit: Fit = .inside, enlarge: Bool = false, quality: Int? = nil,
                format: OutputFormat? = nil, gravity: Gravity = .centre, dpr: Double = 1) {
        self.gravity = gravity
        self.dpr = dpr
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

    /// The processing that makes the placeholder (`ImagePlaceholder`) of what `processing` makes: the same image, as
    /// `.placeholder`, without what only an encoding uses (quality, `maxBytes`); where no size is asked for, the image
    /// fitted into `ImagePlaceholder.side` first (what the placeholder is computed from anyway), so a large source is
    /// decoded shrunk.
    public static func placeholder(of processing: ImageProcessing) -> ImageProcessing {
        var placeholder = processing
        placeholder.format = .placeholder
        placeholder.quality = nil
        placeholder.maxBytes = nil
        if processing.width == nil, processing.height == nil {
            (placeholder.width, placeholder.height, placeholder.fit) = (ImagePlaceholder.side, ImagePlaceholder.side, .inside)
        }
        return placeholder
    }

    /// Whether this makes a placeholder rather than an image.
    public var makesPlaceholder: Bool { format == .placeholder }

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
        if dpr != 1 { parts.append("dpr=\(dpr)") }
        if boxCappedToSource { parts.append("cap=1") }
        if cropRule != .imgproxy { parts.append("crop=\(cropRule.rawValue)") }
        if let sourceCrop { parts.append("sc=\(sourceCrop.left),\(sourceCrop.top),\(sourceCrop.right),\(sourceCrop.bottom)") }
        if fitInFull { parts.append("full=1") }
        if fitInAdaptive { parts.append("adaptive=1") }
        if flipHorizontal { parts.append("fh=1") }
        if flipVertical { parts.append("fv=1") }
        if let canvas { parts.append("fill=\(canvas.text)\(canvasUnderTransparency ? ",under" : "")") }
        if let maxBytes { parts.append("maxb=\(maxBytes)") }
        if let minWidth { parts.append("mw=\(minWidth)") }
        if let minHeight { parts.append("mh=\(minHeight)") }
        if let regionCrop {
            parts.append("c=\(regionCrop.width):\(regionCrop.height)" + (regionCrop.gravity.map { ":" + $0.text } ?? ""))
        }
        if let extend { parts.append("ex=\(extend.text)") }
        if let background { parts.append("bg=\(background.hex)") }
        if let trim { parts.append("trim=\(trim.fromBottomRight ? "br" : "tl"),\(trim.tolerance)") }
        return parts.joined(separator: "&")
    }

    /// Bumped whenever the same options make different pixels (a new filter, orientation, colour conversion; 3:
    /// imgproxy's geometry, where `fill` without `enlarge` keeps the box's shape; 4: an RGB ICC profile converted to
    /// sRGB after the reduce, not before).
    static let revision = 4
}

/// Where a variant's pixels come from in the (upright) source and how large it is: the result of fitting an
/// `ImageProcessing` to one source size.
public struct ProcessingGeometry: Sendable, Hashable {
    /// The part of the upright source used: all of it, or the centred crop of `cover`. Fractional: a crop keeps the
    /// exact aspect ratio of the box.
    public var cropX: Double, cropY: Double, cropWidth: Double, cropHeight: Double
    /// The output size.
    public var width: Int, height: Int
    /// The box asked for (0 for a side not given), turned as thumbor's `adaptive-fit-in` turns it: where `canvas`
    /// (thumbor's `fill()`) puts the image.
    public var boxWidth: Int, boxHeight: Int

    /// imgproxy's `extend`: the canvas the result is placed on (at least the result's size) and where it goes.
    public var extendWidth = 0, extendHeight = 0, extendLeft = 0, extendTop = 0

    /// The size of the canvas `fill()` makes: each side the box's where given and larger, else the output's.
    public var canvasWidth: Int { boxWidth > 0 ? max(boxWidth, width) : width }
    /// See `canvasWidth`.
    public var canvasHeight: Int { boxHeight > 0 ? max(boxHeight, height) : height }

    /// The geometry of `processing` for an upright source of `sourceWidth` x `sourceHeight`: imgproxy's own
    /// (processing/prepare.go `calcScale` and `calcSizes`, then `cropToResult` placed by `calcPosition`), so an
    /// imgproxy URL answers the size imgproxy answers (scripts/open_sources_check.py checks it against a port of the
    /// same code). `inside` is imgproxy's fit, `cover` its fill-down, `coverClipped` its fill, `fill` its force.
    public init(_ processing: ImageProcessing, sourceWidth: Int, sourceHeight: Int) {
        if processing.sourceCrop != nil || processing.regionCrop != nil {
            // A crop before everything: the rest is fitted to the region, which is then placed in the source.
            var rest = processing
            (rest.sourceCrop, rest.regionCrop) = (nil, nil)
            guard let region = Self.sourceRegion(processing, sourceWidth: sourceWidth, sourceHeight: sourceHeight) else {
                self = ProcessingGeometry(rest, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
                return
            }
            self = ProcessingGeometry(rest, sourceWidth: region.width, sourceHeight: region.height)
            (cropX, cropY) = (cropX + Double(region.left), cropY + Double(region.top))
            return
        }
        (boxWidth, boxHeight) = (processing.width ?? 0, processing.height ?? 0)
        if processing.cropRule == .thumbor, processing.fit == .inside {
            self = Self.thumborFitIn(processing, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
            return
        }
        let sw = Double(sourceWidth), sh = Double(sourceHeight)
        var w = processing.width ?? 0, h = processing.height ?? 0
        if processing.boxCappedToSource { (w, h) = (min(w, sourceWidth), min(h, sourceHeight)) }
        if processing.cropRule == .thumbor, processing.fit == .cover, w > 0, h > 0 {
            self = Self.thumborCrop(of: sourceWidth, sourceHeight, to: w, h, gravity: processing.gravity)
            return
        }
        var wshrink = 1.0, hshrink = 1.0
        let dstW = w > 0 ? Double(w) : sw, dstH = h > 0 ? Double(h) : sh
        if dstW != sw { wshrink = sw / dstW }
        if dstH != sh { hshrink = sh / dstH }
        var fit = processing.fit
        if fit == .auto {
            fit = (sw - sh >= 0 && dstW - dstH >= 0) || (sw - sh < 0 && dstW - dstH < 0) ? .coverClipped : .inside
        }
        if wshrink != 1 || hshrink != 1 {
            if w == 0, fit != .fill {
                wshrink = hshrink
            } else if h == 0, fit != .fill {
                hshrink = wshrink
            } else if fit == .inside {
                (wshrink, hshrink) = (max(wshrink, hshrink), max(wshrink, hshrink))
            } else if fit == .cover || fit == .coverClipped {
                (wshrink, hshrink) = (min(wshrink, hshrink), min(wshrink, hshrink))
            }
        }
        var dprScale = processing.dpr
        if !processing.enlarge {
            let least = min(wshrink, hshrink)
            if least < 1 {
                (wshrink, hshrink) = (wshrink / least, hshrink / least)
                if processing.extend == nil { dprScale /= least }
            }
            dprScale = min(dprScale, min(wshrink, hshrink))
        }
        if let minWidth = processing.minWidth, minWidth > 0, sw / Double(minWidth) < wshrink {
            hshrink /= wshrink / (sw / Double(minWidth))
            wshrink = sw / Double(minWidth)
        }
        if let minHeight = processing.minHeight, minHeight > 0, sh / Double(minHeight) < hshrink {
            wshrink /= hshrink / (sh / Double(minHeight))
            hshrink = sh / Double(minHeight)
        }
        (wshrink, hshrink) = (min(wshrink / dprScale, sw), min(hshrink / dprScale, sh))
        let targetW = w > 0 ? Self.round(Double(w) * dprScale) : 0, targetH = h > 0 ? Self.round(Double(h) * dprScale) : 0
        let scaledW = max(1, Self.round(sw / wshrink)), scaledH = max(1, Self.round(sh / hshrink))
        var cropW = targetW, cropH = targetH
        if fit == .cover, !processing.enlarge, targetW > 0, targetH > 0 {
            // fill-down: a box the scaled source cannot fill keeps its aspect ratio, shrunk to fit.
            let diffW = Double(targetW) / Double(scaledW), diffH = Double(targetH) / Double(scaledH)
            if diffW > diffH, diffW > 1 {
                (cropW, cropH) = (scaledW, Self.round(Double(scaledW) * Double(targetH) / Double(targetW)))
            } else if diffH > diffW, diffH > 1 {
                (cropW, cropH) = (Self.round(Double(scaledH) * Double(targetW) / Double(targetH)), scaledH)
            }
        }
        width = cropW > 0 ? min(cropW, scaledW) : scaledW
        height = cropH > 0 ? min(cropH, scaledH) : scaledH
        // The result crop, placed in the scaled image as imgproxy places it, in source pixels.
        let scaleX = Double(scaledW) / sw, scaleY = Double(scaledH) / sh
        let (left, top) = Self.position(scaledW, scaledH, width, height, gravity: processing.gravity, dpr: dprScale)
        (cropX, cropY) = (Double(left) / scaleX, Double(top) / scaleY)
        (cropWidth, cropHeight) = (min(sw, Double(width) / scaleX), min(sh, Double(height) / scaleY))
        (extendWidth, extendHeight) = (width, height)
        if let gravity = processing.extend {
            (extendWidth, extendHeight) = (max(targetW, width), max(targetH, height))
            (extendLeft, extendTop) = Self.position(extendWidth, extendHeight, width, height, gravity: gravity, dpr: dprScale)
        }
    }

    /// thumbor's `auto_crop` then `resize` (transformer.py): the source cropped in whole pixels to the box's shape
    /// around the alignment's focal point (left or top edge 0, centre, right or bottom edge the size), then resized to
    /// the box exactly.
    private static func thumborCrop(of sourceWidth: Int, _ sourceHeight: Int, to targetWidth: Int, _ targetHeight: Int,
                                    gravity: ImageProcessing.Gravity) -> ProcessingGeometry {
        let sw = Double(sourceWidth), sh = Double(sourceHeight)
        var geometry = ProcessingGeometry(.none, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        (geometry.width, geometry.height) = (targetWidth, targetHeight)
        let anchor = gravity.anchor
        var focalX = anchor.horizontal < 0 ? 0 : anchor.horizontal > 0 ? sw : (sw / 2).rounded(.down)
        var focalY = anchor.vertical < 0 ? 0 : anchor.vertical > 0 ? sh : (sh / 2).rounded(.down)
        // A focal point (smart/, found by `Attention`) stands for thumbor's detected focal points.
        if anchor == .focusPoint { (focalX, focalY) = ((gravity.x * sw).rounded(.down), (gravity.y * sh).rounded(.down)) }
        guard let crop = thumborAutoCrop(sourceWidth: sourceWidth, sourceHeight: sourceHeight, targetWidth: Double(targetWidth),
                                         targetHeight: Double(targetHeight), focalX: focalX, focalY: focalY) else { return geometry }
        (geometry.cropX, geometry.cropY) = (Double(crop.left), Double(crop.top))
        (geometry.cropWidth, geometry.cropHeight) = (Double(crop.right - crop.left), Double(crop.bottom - crop.top))
        return geometry
    }

    /// thumbor's `auto_crop` (transformer.py; the geometry's and `meta`'s one reading): the source cut to the target's
    /// shape in whole pixels around the focal point, clamped to the source; nil when the two ratios agree to two
    /// decimals (Python's `round(x, 2)`), as thumbor then crops nothing.
    public static func thumborAutoCrop(sourceWidth: Int, sourceHeight: Int, targetWidth tw: Double, targetHeight th: Double,
                                       focalX: Double, focalY: Double) -> (left: Int, top: Int, right: Int, bottom: Int)? {
        let sw = Double(sourceWidth), sh = Double(sourceHeight)
        guard (sw / sh * 100).rounded(.toNearestOrEven) != (tw / th * 100).rounded(.toNearestOrEven) else { return nil }
        let (cw, ch): (Double, Double) = tw / sw > th / sh
            ? (sw, max(1, (sw * th / tw).rounded(.toNearestOrEven)))
            : (max(1, (tw * sh / th).rounded(.up)), sh)
        let left = min(max(focalX - cw / 2, 0), sw - cw).rounded(.toNearestOrEven)
        let top = min(max(focalY - ch / 2, 0), sh - ch).rounded(.toNearestOrEven)
        return (clampedInt(left), clampedInt(top), clampedInt(min(left + cw, sw)), clampedInt(min(top + ch, sh)))
    }

    /// The part of the source everything else sees: thumbor's manual crop (clamped to the source; ignored when empty) or
    /// imgproxy's crop (sized as `RegionCrop.size` says and placed by its gravity, else `gravity`); nil: all of it.
    public static func sourceRegion(_ processing: ImageProcessing, sourceWidth: Int, sourceHeight: Int)
        -> (left: Int, top: Int, width: Int, height: Int)? {
        if let crop = processing.sourceCrop {
            let left = min(max(crop.left, 0), sourceWidth), right = min(max(crop.right, 0), sourceWidth)
            let top = min(max(crop.top, 0), sourceHeight), bottom = min(max(crop.bottom, 0), sourceHeight)
            guard left < right, top < bottom else { return nil }
            return (left, top, right - left, bottom - top)
        }
        if let region = processing.regionCrop {
            let (width, height) = region.size(sourceWidth: sourceWidth, sourceHeight: sourceHeight)
            guard width < sourceWidth || height < sourceHeight else { return nil }
            let (left, top) = position(sourceWidth, sourceHeight, width, height, gravity: region.gravity ?? processing.gravity, dpr: 1)
            return (left, top, width, height)
        }
        return nil
    }

    /// thumbor's `fit_in_resize` (transformer.py): the target from the box (a side of 0 from the other, rounded as
    /// Python's `round`), turned for `adaptive-fit-in` when its orientation is not the source's; a source inside the
    /// box is kept as it is (not for `full-fit-in`); otherwise the side that limits (`full-fit-in`: the other one) is
    /// the target's, the other scaled and rounded half up, as thumbor adds 1e-5 before Python's `round`.
    private static func thumborFitIn(_ processing: ImageProcessing, sourceWidth: Int, sourceHeight: Int) -> ProcessingGeometry {
        var geometry = ProcessingGeometry(.none, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        let fitIn = thumborFitInResize(processing, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        (geometry.boxWidth, geometry.boxHeight) = (fitIn.boxWidth, fitIn.boxHeight)
        if let resize = fitIn.resize { (geometry.width, geometry.height) = (max(1, clampedInt(resize.width)), max(1, clampedInt(resize.height))) }
        return geometry
    }

    /// thumbor's target (transformer.py `_calculate_target_dimensions`): the box's sides, a side of 0 from the other and
    /// the source's ratio (Python's `round`, at least 1), the source's size without a box. Floats, as thumbor keeps them.
    public static func thumborTarget(width: Int, height: Int, sourceWidth: Int, sourceHeight: Int) -> (width: Double, height: Double) {
        let sw = Double(sourceWidth), sh = Double(sourceHeight)
        guard width > 0 || height > 0 else { return (sw, sh) }
        return (width > 0 ? Double(width) : max(1, (Double(height) * sw / sh).rounded(.toNearestOrEven)),
                height > 0 ? Double(height) : max(1, (Double(width) * sh / sw).rounded(.toNearestOrEven)))
    }

    /// thumbor's `fit_in_resize` (the geometry's and `meta`'s one reading): the box as the request keeps it (turned for
    /// `adaptive-fit-in`), and the resize, nil when the source is kept as it is. `widthFromTarget`: the width is the
    /// target's own (a float, for `meta`) and the height the rounded one, or the other way round.
    public static func thumborFitInResize(_ processing: ImageProcessing, sourceWidth: Int, sourceHeight: Int)
        -> (boxWidth: Int, boxHeight: Int, resize: (width: Double, height: Double, widthFromTarget: Bool)?) {
        let sw = Double(sourceWidth), sh = Double(sourceHeight)
        var w = processing.width ?? 0, h = processing.height ?? 0
        var (tw, th) = thumborTarget(width: w, height: h, sourceWidth: sourceWidth, sourceHeight: sourceHeight)
        if processing.fitInAdaptive, (sw < sh && tw > th) || (sw > sh && tw < th) {
            (tw, th) = (th, tw)
            (w, h) = (h, w)
        }
        let sign = processing.fitInFull ? -1.0 : 1.0
        guard processing.fitInFull || tw < sw || th < sh else { return (w, h, nil) }
        let widthFromTarget = sw / tw * sign >= sh / th * sign
        return (w, h, widthFromTarget ? (tw, (sh * tw / sw + 1e-5).rounded(.toNearestOrEven), true)
                                      : ((sw * th / sh + 1e-5).rounded(.toNearestOrEven), th, false))
    }

    /// Go's `math.Round`: halves away from zero (clamped to ±2^40, so options no parser bounded cannot trap).
    static func round(_ value: Double) -> Int { clampedInt(value.rounded(.toNearestOrAwayFromZero)) }
    /// Go's `math.RoundToEven` (clamped as `round`).
    static func roundToEven(_ value: Double) -> Int { clampedInt(value.rounded(.toNearestOrEven)) }

    private static func clampedInt(_ value: Double) -> Int {
        guard value.isFinite else { return value > 0 ? 1 << 40 : value < 0 ? -(1 << 40) : 0 }
        return Int(min(max(value, -Double(1 << 40)), Double(1 << 40)))
    }

    /// imgproxy's `calcPosition` without overflow: where an `inner` crop sits in an `outer` image for `gravity`
    /// (offsets of 1 or more are CSS pixels, scaled by `dpr`; smaller ones a fraction of the image).
    static func position(_ outerW: Int, _ outerH: Int, _ innerW: Int, _ innerH: Int, gravity: ImageProcessing.Gravity,
                         dpr: Double) -> (Int, Int) {
        var left: Int, top: Int
        if gravity.anchor == .focusPoint {
            left = roundToEven(Double(outerW) * gravity.x) - innerW / 2
            top = roundToEven(Double(outerH) * gravity.y) - innerH / 2
        } else {
            let offX = abs(gravity.x) >= 1 ? roundToEven(gravity.x * dpr) : roundToEven(Double(outerW) * gravity.x)
            let offY = abs(gravity.y) >= 1 ? roundToEven(gravity.y * dpr) : roundToEven(Double(outerH) * gravity.y)
            left = roundToEven(Double(outerW - innerW + 1) / 2) + offX
            top = roundToEven(Double(outerH - innerH + 1) / 2) + offY
            if gravity.anchor.vertical != 0 { top = gravity.anchor.vertical < 0 ? offY : outerH - innerH - offY }
            if gravity.anchor.horizontal != 0 { left = gravity.anchor.horizontal < 0 ? offX : outerW - innerW - offX }
        }
        return (max(0, min(left, outerW - innerW)), max(0, min(top, outerH - innerH)))
    }

    /// Whether the output is the whole source at its own size.
    public func isIdentity(sourceWidth: Int, sourceHeight: Int) -> Bool {
        width == sourceWidth && height == sourceHeight && cropWidth == Double(sourceWidth) && cropHeight == Double(sourceHeight)
    }
}

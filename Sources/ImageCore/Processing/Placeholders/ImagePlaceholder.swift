import Foundation

/// What a front end shows before an image arrives, computed once from the image's decoded pixels (upright and in sRGB,
/// as thumbnails are made) and kept in every tier with it, as a variant (`ImageProcessing.OutputFormat.placeholder`):
/// a BlurHash, a ThumbHash, the average and the dominant colour, and a tiny image as a data URI (LQIP).
///
/// Everything is computed from the image fitted into `side` (32) pixels a side (a tiny image enlarged to
/// `minimumSide`); the LQIP from it fitted into `lqipSide`. 32 pixels hold every detail the hashes keep (ThumbHash at
/// most 7 components a side, BlurHash 9), and cost a tenth of the 100 ThumbHash accepts.
public struct ImagePlaceholder: Sendable, Hashable, Codable {
    /// Wolt's BlurHash, with `BlurHash.components` for the aspect ratio; transparency flattened over white.
    public var blurhash: String
    /// Evan Wallace's ThumbHash, in base64 (standard alphabet, padded), alpha kept.
    public var thumbhash: String
    /// The mean colour, weighted by alpha, `#rrggbb`.
    public var averageColor: String
    /// The mean alpha, 0...1 (1: opaque).
    public var averageAlpha: Double
    /// The most common colour (the fullest cell of 32 levels a channel among pixels at least half opaque, and the mean
    /// of its pixels), `#rrggbb`; the average colour when no pixel is half opaque.
    public var dominantColor: String
    /// A tiny WebP of the image (`lqipSide` pixels on its longer side), as a `data:` URI of a few hundred bytes.
    public var lqip: String

    /// The LQIP's longer side.
    public static let lqipSide = 16
    /// The LQIP's WebP quality.
    static let lqipQuality = 50

    enum CodingKeys: String, CodingKey {
        case blurhash, thumbhash, lqip
        case averageColor = "average_color", averageAlpha = "average_alpha", dominantColor = "dominant_color"
    }

    /// The placeholder of `image` (upright, sRGB).
    ///
    /// - Throws: `.processing` when the image cannot be resampled or the LQIP encoded.
    public init(of image: DecodedImage, subject: String) throws(ImageCoreError) {
        let (smallWidth, smallHeight) = Self.encodedSize(width: image.width, height: image.height)
        var small = image.expandedToRGBA()
        if smallWidth != image.width || smallHeight != image.height {
            small = try small.resampled(x0: 0, y0: 0, x1: Double(image.width), y1: Double(image.height),
                                        width: smallWidth, height: smallHeight, subject: subject).expandedToRGBA()
        }
        thumbhash = Data(ThumbHash.encode(rgba: small.pixels, width: small.width, height: small.height)).base64EncodedString()
        let opaque = small.flattened(over: .white).expandedToRGBA()
        var rgb = [UInt8](); rgb.reserveCapacity(small.width * small.height * 3)
        for at in stride(from: 0, to: opaque.pixels.count, by: 4) { rgb += opaque.pixels[at..<(at + 3)] }
        // No more components along a side than it has pixels (a 1-pixel-wide image has no horizontal detail).
        let components = BlurHash.components(width: small.width, height: small.height)
        let (componentsX, componentsY) = (min(components.x, small.width), min(components.y, small.height))
        blurhash = BlurHash.encode(rgb: rgb, width: small.width, height: small.height, componentsX: componentsX, componentsY: componentsY)
        (averageColor, averageAlpha) = Self.average(small.pixels)
        dominantColor = Self.dominant(small.pixels) ?? averageColor
        let (lqipWidth, lqipHeight) = Self.fitted(width: small.width, height: small.height, into: Self.lqipSide)
        let tiny = try small.resampled(x0: 0, y0: 0, x1: Double(small.width), y1: Double(small.height),
                                       width: lqipWidth, height: lqipHeight, subject: subject)
        lqip = "data:image/webp;base64," + Data(try WebPEncoder.encode(tiny, quality: Self.lqipQuality, subject: subject)).base64EncodedString()
    }

    /// The placeholder as stored in the tiers and served: JSON, keys sorted.
    public var json: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? Array(encoder.encode(self))) ?? []  // a struct of strings and numbers always encodes
    }

    /// A placeholder read back from a tier: nil when the bytes are not one (damaged, or another version's).
    public init?(json bytes: [UInt8]) {
        guard let decoded = try? JSONDecoder().decode(Self.self, from: Data(bytes)) else { return nil }
        self = decoded
    }

    /// The raw ThumbHash bytes.
    public var thumbhashBytes: [UInt8] { Data(base64Encoded: thumbhash).map(Array.init) ?? [] }

    /// The side the hashes and colours are computed at.
    public static let side = 32

    /// The size the hashes are computed at: the image fitted into `side`; an image smaller than
    /// `minimumSide` on a side is enlarged (uniformly, within `maxSide`) to it first, because both hashes' cosines
    /// alias on a few pixels: the reference encoders draw a 1x1 white image as a pattern of light and dark.
    static func encodedSize(width: Int, height: Int) -> (Int, Int) {
        guard min(width, height) < minimumSide, max(width, height) < side else {
            return fitted(width: width, height: height, into: side)
        }
        let scale = min(Double(minimumSide) / Double(min(width, height)), Double(side) / Double(max(width, height)))
        return (min(side, Int((Double(width) * scale).rounded())), min(side, Int((Double(height) * scale).rounded())))
    }

    /// The smallest side the hashes are computed on, when the aspect ratio allows (see `encodedSize`).
    static let minimumSide = 8

    /// `width` by `height` fitted into `side` by `side`, the aspect ratio kept, at least 1 pixel a side; unchanged
    /// when it fits.
    static func fitted(width: Int, height: Int, into side: Int) -> (Int, Int) {
        guard width > side || height > side else { return (width, height) }
        let scale = Double(side) / Double(max(width, height))
        return (max(1, min(side, Int((Double(width) * scale).rounded()))), max(1, min(side, Int((Double(height) * scale).rounded()))))
    }

    /// The alpha-weighted mean colour of RGBA pixels, and the mean alpha.
    static func average(_ rgba: [UInt8]) -> (String, Double) {
        var (r, g, b, a) = (0.0, 0.0, 0.0, 0.0)
        for at in stride(from: 0, to: rgba.count, by: 4) {
            let alpha = Double(rgba[at + 3])
            r += Double(rgba[at]) * alpha; g += Double(rgba[at + 1]) * alpha; b += Double(rgba[at + 2]) * alpha; a += alpha
        }
        let count = Double(max(1, rgba.count / 4))
        guard a > 0 else { return ("#000000", 0) }
        return (hex(r / a, g / a, b / a), (a / 255 / count * 1000).rounded() / 1000)
    }

    /// The mean of the pixels in the fullest cell of a 32-level-a-channel histogram, among pixels at least half
    /// opaque; nil when there are none. Ties go to the lower cell, so the answer does not depend on pixel order.
    static func dominant(_ rgba: [UInt8]) -> String? {
        var counts = [Int](repeating: 0, count: 32 * 32 * 32)
        var sums = [Int](repeating: 0, count: 32 * 32 * 32 * 3)
        for at in stride(from: 0, to: rgba.count, by: 4) where rgba[at + 3] >= 128 {
            let cell = Int(rgba[at] >> 3) << 10 | Int(rgba[at + 1] >> 3) << 5 | Int(rgba[at + 2] >> 3)
            counts[cell] += 1
            sums[cell * 3] += Int(rgba[at]); sums[cell * 3 + 1] += Int(rgba[at + 1]); sums[cell * 3 + 2] += Int(rgba[at + 2])
        }
        guard let fullest = counts.indices.max(by: { counts[$0] < counts[$1] || (counts[$0] == counts[$1] && $0 > $1) }),
              counts[fullest] > 0 else { return nil }
        let n = Double(counts[fullest])
        return hex(Double(sums[fullest * 3]) / n, Double(sums[fullest * 3 + 1]) / n, Double(sums[fullest * 3 + 2]) / n)
    }

    private static func hex(_ r: Double, _ g: Double, _ b: Double) -> String {
        "#" + ImageProcessing.Color(red: UInt8(max(0, min(255, r.rounded()))), green: UInt8(max(0, min(255, g.rounded()))),
                                    blue: UInt8(max(0, min(255, b.rounded())))).hex.prefix(6)
    }
}

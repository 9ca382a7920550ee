/// An image format recognised by its magic bytes.
public enum ImageFormat: String, Sendable, Codable, CaseIterable {
    /// JPEG: `FF D8 FF`.
    case jpeg
    /// PNG: `89 50 4E 47 0D 0A 1A 0A`.
    case png
    /// GIF: `GIF87a` / `GIF89a` (the first frame's pixels; every frame decoded).
    case gif
    /// WebP: `RIFF....WEBP` (lossy, lossless, with alpha, animated).
    case webp
    /// BMP: `BM` (recognised, not decoded).
    case bmp
    /// TIFF: `II*\0` / `MM\0*` (recognised, not decoded).
    case tiff
    /// AVIF: an ISO BMFF `ftyp` box whose major or a compatible brand is `avif` or `avis`.
    case avif
    /// Not an image: TileCache's placeholder document (`ImagePlaceholder`, JSON), kept in the tiers as a variant of
    /// the image it describes. Never sniffed from downloaded bytes, never decoded.
    case placeholder

    /// The MIME type this format is served as.
    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .gif: "image/gif"
        case .webp: "image/webp"
        case .bmp: "image/bmp"
        case .tiff: "image/tiff"
        case .avif: "image/avif"
        case .placeholder: "application/json"
        }
    }

    /// Whether the core can decode this format (JPEG, PNG, WebP, GIF and AVIF).
    public var isDecodable: Bool { self != .bmp && self != .tiff && self != .placeholder }

    /// The formats the core decodes, as error messages name them.
    static let decodableNames = "JPEG, PNG, WebP, GIF and AVIF"

    /// The format these bytes start with, or nil when they start like no known image format.
    ///
    /// Only the first 12 bytes are looked at (an ISO BMFF file's: its `ftyp` box, at most 64 bytes); Content-Type and
    /// file names are never consulted.
    public static func sniff<Bytes: RandomAccessCollection>(_ bytes: Bytes) -> ImageFormat?
    where Bytes.Element == UInt8, Bytes.Index == Int {
        func starts(with magic: [UInt8], at offset: Int = 0) -> Bool {
            guard bytes.count >= offset + magic.count else { return false }
            var index = bytes.startIndex + offset
            for byte in magic {
                if bytes[index] != byte { return false }
                index += 1
            }
            return true
        }
        if starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(with: Array("GIF87a".utf8)) || starts(with: Array("GIF89a".utf8)) { return .gif }
        if starts(with: Array("RIFF".utf8)) && starts(with: Array("WEBP".utf8), at: 8) { return .webp }
        if starts(with: [0x49, 0x49, 0x2A, 0x00]) || starts(with: [0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if starts(with: Array("BM".utf8)) && bytes.count >= 26 { return .bmp }
        if starts(with: Array("ftyp".utf8), at: 4) {
            // The box's size (big-endian), then the major brand, a minor version and the compatible brands.
            let size = bytes.prefix(4).reduce(0) { $0 << 8 | Int($1) }
            let brands = [8] + Array(Swift.stride(from: 16, to: min(size, 64, bytes.count) - 3, by: 4))
            if brands.contains(where: { starts(with: Array("avif".utf8), at: $0) || starts(with: Array("avis".utf8), at: $0) }) {
                return .avif
            }
        }
        return nil
    }

    /// The format a Content-Type names (parameters and case ignored), or nil for a non-image type.
    public init?(contentType: String) {
        let mime = contentType.split(separator: ";", maxSplits: 1).first.map { String($0).trimmingWhitespace().lowercased() }
        switch mime {
        case "image/jpeg", "image/jpg", "image/pjpeg": self = .jpeg
        case "image/png", "image/x-png": self = .png
        case "image/gif": self = .gif
        case "image/webp": self = .webp
        case "image/bmp", "image/x-ms-bmp": self = .bmp
        case "image/tiff": self = .tiff
        case "image/avif": self = .avif
        default: return nil
        }
    }
}

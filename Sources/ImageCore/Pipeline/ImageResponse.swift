import Foundation

/// How a request was satisfied.
public enum ImageOutcome: String, Sendable, Codable, CaseIterable {
    /// Found decoded in the memory cache.
    case memoryHit
    /// Read from the disk cache, verified and decoded.
    case diskHit
    /// A stale disk entry confirmed by a 304 to a conditional request.
    case revalidated
    /// Downloaded, validated and decoded.
    case networkFetch

    /// Whether the outcome counts as a cache hit (memory, disk or revalidated).
    public var isHit: Bool { self != .networkFetch }
}

/// A decoded image and what it took to get it.
public struct ImageResponse: Sendable {
    /// The URL requested.
    public var url: String
    /// The other URL (another spelling) that served the image, when `url` itself has none; nil otherwise.
    public var servedBy: String?
    /// The decoded pixels.
    public var image: DecodedImage
    /// Format, size and encoded byte count.
    public var header: ImageHeader
    /// How the request was satisfied.
    public var outcome: ImageOutcome
    /// Non-fatal findings (content-type mismatch, harmless decoder warnings, served stale).
    public var warnings: [String]
    /// Time from request to response.
    public var latency: Duration
    /// Bytes received from the network for this request (0 for cache hits and 304s).
    public var bytesDownloaded: Int
}

/// What the memory cache holds for a URL: pixels plus the header they came from. Its cost is the pixel bytes.
public struct CachedImage: Sendable {
    /// The decoded pixels.
    public var image: DecodedImage
    /// Format, size and encoded byte count.
    public var header: ImageHeader

    /// An entry for the memory cache.
    public init(image: DecodedImage, header: ImageHeader) {
        self.image = image
        self.header = header
    }
}

/// The original bytes of a validated image and what it took to get them.
public struct EncodedImage: Sendable {
    /// The URL requested.
    public var url: String
    /// The other URL (another spelling) that served the image, when `url` itself has none; nil otherwise.
    public var servedBy: String?
    /// The bytes exactly as the server sent them (validated).
    public var bytes: [UInt8]
    /// Content type, format, dimensions, validators and freshness.
    public var metadata: DiskCacheMetadata
    /// How the request was satisfied (never `.memoryHit`: the pipeline's memory holds pixels, not bytes).
    public var outcome: ImageOutcome
    /// Non-fatal findings.
    public var warnings: [String]
    /// Time from request to response.
    public var latency: Duration
    /// Bytes received from the network for this request.
    public var bytesDownloaded: Int
}

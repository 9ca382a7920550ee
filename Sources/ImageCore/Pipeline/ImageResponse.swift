import Foundation
public import NIOCore

/// How a request was satisfied: which layer had the source image.
public enum ImageOutcome: String, Sendable, Codable, CaseIterable {
    /// Found in the memory tier (the image itself, or for a variant, the variant).
    case memoryHit
    /// Read from the disk cache, verified by its checksum.
    case diskHit
    /// A stale disk entry confirmed by a 304 to a conditional request.
    case revalidated
    /// Read from the shared store (S3) of a fleet, verified by its SHA-256 and validated, then written to local disk;
    /// for a variant, the variant another instance made.
    case sharedHit
    /// Downloaded, validated and decoded.
    case networkFetch

    /// Whether the outcome counts as a cache hit (memory, disk, revalidated or shared).
    public var isHit: Bool { self != .networkFetch }
}

/// What the memory tier holds: decoded pixels (the seed app's `NSCache` of images, what the CLI and the lab
/// measure) or encoded bytes (what a server sends without re-encoding). Count and byte limits are exact either way;
/// an entry's cost is its pixel bytes or its encoded bytes.
public enum MemoryContent: String, Sendable, Hashable, Codable, CaseIterable {
    /// Decoded pixels; a memory hit returns `image` and no `bytes`.
    case decoded
    /// Encoded bytes; a memory hit returns `bytes` (pixels only when the request asks for them).
    case encoded
}

/// The HTTP validators of an image (or variant), for conditional requests to whoever serves it on.
public struct ImageValidators: Sendable, Hashable {
    /// A strong ETag: the first 32 hex digits of the source's SHA-256, plus the processing (`-w64`) for a variant.
    public var etag: String
    /// An HTTP date: upstream's Last-Modified, else when the source was stored.
    public var lastModified: String

    /// The validators of the original image `metadata` describes.
    init(source metadata: DiskCacheMetadata) {
        etag = ImageKey.etag(sourceChecksum: metadata.checksum)
        lastModified = metadata.lastModified ?? HTTPDate.string(from: metadata.storedAt)
    }

    /// Validators as stored (a variant read from the shared tier).
    init(etag: String, lastModified: String) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// The validators of a variant of this (original) image: the ETag names the processing.
    public func processed(_ processing: ImageProcessing) -> ImageValidators {
        var copy = self
        copy.etag = ImageKey.etag(variantOf: etag, processing: processing)
        return copy
    }
}

/// An image and what it took to get it.
public struct ImageResponse: Sendable {
    /// The request answered.
    public var request: ImageRequest
    /// The URL requested.
    public var url: String { request.url }
    /// The other URL (another spelling) that served the image, when `url` itself has none; nil otherwise.
    public var servedBy: String?
    /// The encoded bytes: the original, validated, or the variant the processing made. Nil only for a memory hit
    /// when the memory tier holds decoded pixels.
    public var bytes: ByteBuffer?
    /// Format, size and encoded byte count of what is returned (the variant's, for a processed request).
    public var header: ImageHeader
    /// The media type of `bytes`.
    public var contentType: String
    /// Content-Type as the origin served the source, when known (nil for a memory hit).
    public var originContentType: String?
    /// ETag and Last-Modified.
    public var validators: ImageValidators
    /// Decoded pixels: when the memory tier holds pixels, or when the request asked for them (`.returnPixels`).
    public var image: DecodedImage?
    /// Which layer had the source.
    public var outcome: ImageOutcome
    /// Whether this request made its variant (a resize) rather than finding it in memory.
    public var processed: Bool
    /// Whether this request was answered by a load another request had started (it waited for that load).
    public var shared: Bool
    /// The final HTTP status, when this request's load went to the network.
    public var httpStatus: Int?
    /// Non-fatal findings (content-type mismatch, harmless decoder warnings, served stale).
    public var warnings: [String]
    /// Time from request to response.
    public var latency: Duration
    /// Phase timings of the transfer, when there was one.
    public var transferTimings: TransferTimings?
    /// Bytes received from the network for this request (0 for cache hits and 304s).
    public var bytesDownloaded: Int

    /// The placeholder a placeholder request's response holds, read from its bytes; nil for an image, and for bytes
    /// that do not read as one.
    public var placeholder: ImagePlaceholder? {
        guard header.format == .placeholder, let bytes else { return nil }
        return ImagePlaceholder(json: Array(bytes.readableBytesView))
    }
}

/// What the memory tier holds for a key: pixels or encoded bytes (see `MemoryContent`), with the header and
/// validators of the image, so a hit answers without touching disk.
public struct CachedImage: Sendable {
    /// Format, size and encoded byte count.
    public var header: ImageHeader
    /// The media type of the encoded image.
    public var contentType: String
    /// ETag and Last-Modified.
    public var validators: ImageValidators
    /// Decoded pixels (`.decoded` content).
    public var image: DecodedImage?
    /// Encoded bytes (`.encoded` content).
    public var bytes: ByteBuffer?
    /// When the source stops being fresh (its stored-at plus its lifetime), when known: a variant made from it and
    /// written to the shared tier is fresh as long.
    var freshUntil: Date?

    /// What the entry costs against the byte limit: its pixels plus the storage its encoded bytes hold. A `ByteBuffer`
    /// rounds its storage up to a power of two, so counting only the readable bytes let a tier of 16 MiB hold up to
    /// 32 MiB (issue 19's serve soak).
    public var cost: Int { (image?.cost ?? 0) + (bytes?.storageCapacity ?? 0) }
}

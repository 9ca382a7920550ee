import NIOCore
import Foundation

/// What one load produced, shared by every request that waited for it.
struct Loaded: Sendable {
    var servedBy: String?
    /// The encoded bytes; nil only for a memory hit when the tier holds pixels.
    var bytes: ByteBuffer?
    var header: ImageHeader
    var contentType: String
    var originContentType: String?
    var validators: ImageValidators
    /// Pixels, when the load had them at hand (downloaded and validated, or decoded from disk).
    var image: DecodedImage?
    var outcome: ImageOutcome
    var processed = false
    var warnings: [String]
    var httpStatus: Int?
    var timings: TransferTimings?
    var bytesDownloaded: Int
    /// When the source stops being fresh, when known (see `CachedImage.freshUntil`).
    var freshUntil: Date?
}

/// What an original's load found before it became a `Loaded`: the bytes, their metadata, how they were had, and the
/// image when already decoded.
struct LoadedBytes: Sendable {
    var bytes: [UInt8]
    var metadata: DiskCacheMetadata
    var outcome: ImageOutcome
    var validated: ValidatedImage?
    var warnings: [String] = []
    /// The other URL that served the image, when the one asked for has none.
    var servedBy: String?
    var httpStatus: Int?
    var timings: TransferTimings?
    var bytesDownloaded = 0
}

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
    /// The original's full-size pixels, when the load had them at hand (downloaded and validated by a full decode, or
    /// decoded from disk); nil when a download was validated by a variant's decode instead (`variantPixels`).
    var image: DecodedImage?
    /// The pixels a download was validated by when it was decoded for a variant (`LoadPolicy.variant`) instead of in
    /// full: not the original's pixels, never kept in memory.
    var variantPixels: VariantPixels?
    var outcome: ImageOutcome
    var processed = false
    var warnings: [String]
    var httpStatus: Int?
    var timings: TransferTimings?
    var bytesDownloaded: Int
    /// When the source stops being fresh, when known (see `CachedImage.freshUntil`).
    var freshUntil: Date?
    /// The download's store in the data tiers, still running, when the load is a variant's source (`LoadPolicy
    /// .variant`): see `LoadedBytes.pendingStore`. Whoever takes the load's result waits for it before answering
    /// (`settled()`, or `VariantMaker.make`), so no request ends before its source is stored.
    var pendingStore: Task<[String], Never>?

    /// This result once its pending store has finished, with the store's warnings before the others, where they are
    /// when the load waits for its store itself.
    func settled() async -> Loaded {
        guard let pendingStore else { return self }
        var settled = self
        settled.pendingStore = nil
        settled.warnings = await pendingStore.value + warnings
        return settled
    }
}

/// What an original's load found before it became a `Loaded`: the bytes, their metadata, how they were had, and the
/// image when already decoded.
struct LoadedBytes: Sendable {
    var bytes: [UInt8]
    var metadata: DiskCacheMetadata
    var outcome: ImageOutcome
    var validated: ValidatedImage?
    /// The pixels the bytes were validated by instead, when decoded for a variant (`LoadPolicy.variant`).
    var variantPixels: VariantPixels?
    var warnings: [String] = []
    /// The other URL that served the image, when the one asked for has none.
    var servedBy: String?
    var httpStatus: Int?
    var timings: TransferTimings?
    var bytesDownloaded = 0
    /// The store of a download in the data tiers, begun after its validation and left running, when the load is only a
    /// variant's source (`LoadPolicy.variant`): the write and the variant's lookup and processing then take the
    /// blocking pool's threads at once, instead of one after the other. Its value is the reasons a tier stored nothing.
    var pendingStore: Task<[String], Never>?
}

/// A JPEG download decoded for a variant rather than in full, a decode that was also its validation (the inspector's
/// `check`, at its strictness): at that variant's DCT scale, colour-managed (a CMYK profile applied, an RGB one carried
/// to be applied after the reduce: `ImageProcessor.decode(_:for:subject:inspector:checking:)`). Any variant whose
/// shrink on load is the same scale is made from these pixels; they are the pixels its own decode of the bytes would
/// give (ImageProcessorTests), so a cold miss decodes once.
struct VariantPixels: Sendable {
    /// The numerator n of the DCT scale n/8 the pixels were decoded at (`ImageProcessor.shrinkOnLoad`).
    var scale: Int
    /// The pixels, with the source's full-size header and the decode's warnings.
    var source: ImageProcessor.Source
}

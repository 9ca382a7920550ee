/// What one request may do at each stage, read once from its options and the pipeline's configuration: the stages
/// read these fields, not the options.
struct LoadPolicy: Sendable {
    /// Answer from the memory tier (not a reload).
    var readsMemory: Bool
    /// Keep the result in the memory tier.
    var writesMemory: Bool
    /// Read the data tiers and the aliases found before (not a reload).
    var readsTiers: Bool
    /// Write to the data tiers, and remember aliases there.
    var writesTiers: Bool
    /// Go to the network for what the tiers lack, or to revalidate a stale entry. Without it a miss fails with
    /// `.notCached` and a stale entry is returned as it is.
    var mayDownload: Bool
    /// Decode the image: the request asks for pixels, or the memory tier keeps pixels.
    var decodes: Bool
    /// Return pixels to the caller even when the memory tier keeps encoded bytes.
    var returnsPixels: Bool
    /// Nothing is kept (no tier, no memory) and no pixels are wanted: `validate`'s case, where a download is checked
    /// (every JPEG block entropy-decoded) instead of fully decoded.
    var keepsNothing: Bool
    /// Which addresses a download may connect to.
    var addresses: AddressRule
    /// The processing of the variant this load is the source of, when no one wants the original's pixels: a JPEG
    /// download is then validated by the decode that variant needs (`VariantPixels`) instead of a full one.
    var variant: ImageProcessing?

    init(_ request: ImageRequest, configuration: ImagePipeline.Configuration, hasTiers: Bool) {
        let options = request.options
        addresses = request.addresses
        readsMemory = !options.contains(.reloadIgnoringCachedData)
        writesMemory = !options.contains(.disableMemoryCacheWrites)
        readsTiers = !options.contains(.reloadIgnoringCachedData)
        writesTiers = hasTiers && !options.contains(.disableDiskCacheWrites)
        mayDownload = !options.contains(.returnCacheDataDontLoad)
        returnsPixels = options.contains(.returnPixels)
        decodes = returnsPixels || (configuration.memoryContent == .decoded && writesMemory)
        keepsNothing = !writesTiers && !writesMemory && !decodes
    }
}

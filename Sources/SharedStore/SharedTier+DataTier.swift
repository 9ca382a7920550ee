public import ImageCore
/// The shared store of a fleet as a data tier: objects other machines wrote, verified by their SHA-256 and URL, and
/// decoded before use; writes go through the tier's background queue.
extension SharedTier: DataTier {
    public var hitOutcome: ImageOutcome { .sharedHit }
    public var holdsValidatedImages: Bool { false }

    public func entry(for key: ImageKey, decode: (@Sendable (DiskCacheEntry) -> ValidatedImage?)?) async -> TierHit? {
        await entry(named: key.sharedObjectName, url: key.cacheKey).map { TierHit(entry: $0.entry) }
    }

    public func store(_ bytes: [UInt8], metadata: DiskCacheMetadata, for key: ImageKey) async -> String? {
        store(named: key.sharedObjectName, bytes: bytes, metadata: metadata)
        return nil
    }
}

import Logging

/// The local disk as the first data tier: what this machine validated before storing it.
extension DiskCache: DataTier {
    public var hitOutcome: ImageOutcome { .diskHit }
    public var holdsValidatedImages: Bool { true }

    public func entry(for key: ImageKey, decode: (@Sendable (DiskCacheEntry) -> ValidatedImage?)?) async -> TierHit? {
        // One trip to the blocking pool reads the entry and, when asked, decodes it too.
        await BlockingWork.run {
            guard let entry = self.readEntry(for: key.cacheKey) else { return nil }
            return TierHit(entry: entry, validated: decode?(entry))
        }
    }

    public func store(_ bytes: [UInt8], metadata: DiskCacheMetadata, for key: ImageKey) async -> String? {
        do {
            try await store(bytes, metadata: metadata)
            return nil
        } catch {
            logger.warning("could not store to the disk cache", metadata: ["url": "\(key.cacheKey)", "reason": "\(error.message)"])
            return "not stored: \(error.message)"
        }
    }

    public func remove(_ key: ImageKey) async {
        await remove(key.cacheKey)
    }
}

public import Foundation
import Logging

/// Answers that an image is missing upstream (404 or 410), remembered in the index for every process that uses the
/// directory until they expire (`NegativeCache` decides what and how long). A cache without a usable index (opened to
/// read only, or its index refused) remembers none: the answers are then this process's alone.
extension DiskCache {
    /// The answer remembered that the image under `key` (`ImageKey.cacheKey`) is missing, when it has not expired by
    /// `now`; nil too when the index cannot be read (logged: a forgotten answer is only asked again).
    public func knownMissing(_ key: String, now: Date = Date()) async -> KnownMissing? {
        guard let index else { return nil }
        return await BlockingWork.run {
            do {
                return try index.knownMissing(key, now: now)
            } catch {
                self.logger.warning("cannot read the cache index", metadata: ["path": "\(index.path)", "reason": "\(DiskCacheIndex.describe(error))"])
                return nil
            }
        }
    }

    /// Remembers that the image under `key` is missing upstream, until `known.until`.
    ///
    /// - Throws: `.io` naming the index when the cache is read-only or the index cannot be written.
    public func rememberMissing(_ known: KnownMissing, for key: String) async throws(ImageCoreError) {
        try refuseIfReadOnly(directory)
        guard let index else { return }
        try await BlockingWork.run { () throws(ImageCoreError) in
            do {
                try index.write { try $0.rememberMissing(key, known) }
            } catch {
                throw ImageCoreError(.io, subject: index.path, message: "cannot remember a missing image: \(DiskCacheIndex.describe(error))")
            }
        }
    }

    /// Forgets what is remembered of `key` (logged when the index cannot be written).
    public func forgetMissing(_ key: String) async {
        guard !isReadOnly, let index else { return }
        await BlockingWork.run {
            do {
                try index.write { try $0.forgetMissing(key) }
            } catch {
                self.logger.warning("cannot write the cache index", metadata: ["path": "\(index.path)", "reason": "\(DiskCacheIndex.describe(error))"])
            }
        }
    }
}

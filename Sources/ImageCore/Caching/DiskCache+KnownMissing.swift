public import Foundation
import Logging

/// Answers that an image is missing upstream (404 or 410), remembered in the index for every process that uses the
/// directory until they expire (`NegativeCache` decides what and how long). A cache without a usable index (opened to
/// read only, or its index refused) remembers none: the answers are then this process's alone. Not to be confused with
/// `forgetMissing(_:)`, which drops the row of an entry whose file is gone.
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

    /// Remembers that the image under `key` is missing upstream, until `known.until`. Like an entry's write, it is
    /// skipped while the file system refuses writes, and a refusal turns writing off (`+WriteRefusal`).
    ///
    /// - Throws: `.io` naming the index when the cache is read-only or the index cannot be written otherwise.
    public func rememberKnownMissing(_ known: KnownMissing, for key: String) async throws(ImageCoreError) {
        try refuseIfReadOnly(directory)
        guard let index, !admitWrite().skip else { return }
        try await BlockingWork.run { () throws(ImageCoreError) in
            do {
                try index.write { try $0.rememberKnownMissing(key, known) }
            } catch where DiskCacheIndex.refusesWrites(error) {
                self.refuseWrites(DiskCacheIndex.describe(error))
            } catch {
                throw ImageCoreError(.io, subject: index.path, message: "cannot remember a missing image: \(DiskCacheIndex.describe(error))")
            }
        }
    }

    /// Forgets what is remembered of `key`, if anything is: a read first, so that a reload of an image never said
    /// to be missing takes no write lock (logged when the index cannot be written).
    public func forgetKnownMissing(_ key: String) async {
        guard !isReadOnly, let index else { return }
        await BlockingWork.run {
            do {
                guard try index.knownMissing(key, now: .distantPast) != nil else { return }
                try index.write { try $0.forgetKnownMissing(key) }
            } catch {
                self.logger.warning("cannot write the cache index", metadata: ["path": "\(index.path)", "reason": "\(DiskCacheIndex.describe(error))"])
            }
        }
    }
}

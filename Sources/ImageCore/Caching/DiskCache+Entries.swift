import NIOConcurrencyHelpers
import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The entries themselves, synchronously, on the caller's thread: what `DiskCache`'s async API runs on the blocking
/// pool. Reads verify each entry's checksum; writes go to a temp file, then into place and into the index under the
/// index's lock; eviction happens in the same transaction (`DiskCacheIndex.Transaction.evict`).
extension DiskCache {
    /// See `entry(for:)`.
    func readEntry(for url: String) -> DiskCacheEntry? {
        let name = ImageKey.diskEntryName(forKey: url)
        let path = entriesDirectory + "/" + name
        let file: [UInt8]?
        do {
            file = try LocalFile.read(path, upTo: .max)
        } catch {
            logger.warning("cannot read a cache entry", metadata: ["url": "\(url)", "path": "\(path)", "reason": "\(error.message)"])
            file = nil
        }
        guard let file else {
            state.withLockedValue { $0.statistics.misses += 1 }
            forgetMissing(name)
            return nil
        }
        switch DiskCacheFile.decode(file, expectedURL: url) {
        case .success(let entry):
            let batchFull = state.withLockedValue { state in
                state.statistics.hits += 1
                guard !isReadOnly else { return false }
                state.touches[name] = Self.now()
                return state.touches.count >= Self.touchBatch
            }
            if batchFull { writeTouches() }
            return entry
        case .failure(.otherURL):
            state.withLockedValue { $0.statistics.misses += 1 }
            return nil
        case .failure(.damaged(let why)):
            state.withLockedValue { $0.statistics.misses += 1 }
            guard !isReadOnly else { return nil }
            logger.warning("removing damaged cache entry", metadata: ["url": "\(url)", "path": "\(path)", "reason": "\(why)"])
            // Removed only if still damaged once the index is locked: another process may have stored the URL again.
            if removeFile(named: name, onlyIf: { file in
                guard case .failure(.damaged) = DiskCacheFile.decode(file, expectedURL: url) else { return false }
                return true
            }) {
                state.withLockedValue { $0.statistics.damagedRemoved += 1 }
            }
            return nil
        }
    }

    /// See `store(_:metadata:)`.
    @discardableResult
    func writeEntry(_ bytes: [UInt8], metadata: DiskCacheMetadata) throws(ImageCoreError) -> Bool {
        try refuseIfReadOnly(metadata.url)
        guard let index else {
            state.withLockedValue { $0.statistics.skippedWrites += 1 }  // the index could not be opened (see init)
            return false
        }
        let header: [UInt8]
        do {
            header = try DiskCacheFile.header(metadata)
        } catch {
            throw ImageCoreError(.io, subject: metadata.url, message: "cannot encode cache metadata: \(error)")
        }
        let fileSize = header.count + bytes.count
        guard fileSize <= sizeLimit else {
            state.withLockedValue { state in
                state.statistics.tooLarge += 1
                state.statistics.smallestTooLarge = min(state.statistics.smallestTooLarge ?? .max, fileSize)
            }
            return false
        }
        // Skip while writing is off; past the retry time this write is the retry that may turn writing back on.
        let (skip, retrying) = admitWrite()
        if skip { return false }
        let name = ImageKey.diskEntryName(forKey: metadata.url)
        let path = entriesDirectory + "/" + name
        let temp = newTempPath()
        do {
            try write(header, bytes, to: temp)
        } catch {
            switch error {
            case .refused(let reason):
                refuseWrites(reason)
                return false
            case .failed(let failure):
                throw failure
            }
        }
        // Into place, and into the index, under the index's lock; this process's pending access times go with it, so
        // the eviction sees them.
        let touches = state.withLockedValue { state in
            defer { state.touches = [:] }
            return state.touches
        }
        // The rows first, the rename last: whatever fails before it leaves the previous entry as it was.
        var moved = false, replaced = false
        let evicted: [DiskCacheIndex.Row]
        do {
            evicted = try index.write { transaction in
                for (touched, time) in touches { try transaction.touch(touched, lastAccess: time) }
                replaced = try transaction.contains(name)
                try transaction.upsert(name, size: fileSize, lastAccess: Self.now())
                let evicted = try transaction.evict(downTo: sizeLimit)
                guard rename(temp, path) == 0 else {
                    throw ImageCoreError(.io, subject: path, message: "cannot move the cache entry into place: \(String(cString: strerror(errno)))")
                }
                moved = true
                for row in evicted { unlinkLogging(entriesDirectory + "/" + row.name) }
                return evicted
            }
        } catch {
            // Rolled back. Before the rename: only the temp file to remove. After it (the commit failed): a new entry
            // without a row is removed; one that replaced an entry is kept (it is complete, for the same URL) with the
            // old row's size, which the next open corrects (this process's writer row is left, so that open checks
            // every size). Evicted files already removed keep their rows until a read or the next open finds them gone.
            if !moved {
                unlink(temp)
            } else if !replaced {
                unlink(path)
            } else {
                state.withLockedValue { $0.sizesUnsure = true }
            }
            if let failure = error as? ImageCoreError { throw failure }
            if DiskCacheIndex.refusesWrites(error) {
                refuseWrites(DiskCacheIndex.describe(error))
                return false
            }
            throw ImageCoreError(.io, subject: index.path, message: "cannot record the cache entry: \(DiskCacheIndex.describe(error))")
        }
        // Only a retry turns writing back on: a write that began before another was refused may still fit (a small
        // file on a nearly full disk), which says nothing about the next one.
        let resumed = state.withLockedValue { state in
            state.statistics.writes += 1
            state.statistics.evictions += evicted.count
            defer { if retrying { state.refusal = nil } }
            return retrying && state.refusal != nil
        }
        if resumed { logger.info("the disk cache is writable again", metadata: ["directory": "\(directory)"]) }
        return true
    }

    /// See `remove(_:)`.
    func removeEntry(_ url: String) {
        guard !isReadOnly else { return }
        removeFile(named: ImageKey.diskEntryName(forKey: url))
    }

    /// See `allMetadata()`.
    func readAllMetadata() -> [DiskCacheMetadata] {
        let names: [String]
        if let index {
            do {
                names = try index.allNames()
            } catch {
                logger.warning("cannot read the cache index", metadata: ["path": "\(index.path)", "reason": "\(DiskCacheIndex.describe(error))"])
                return []
            }
        } else {
            names = state.withLockedValue { Array($0.snapshot.keys) }
        }
        return names.compactMap { name -> DiskCacheMetadata? in
            let path = entriesDirectory + "/" + name
            do throws(ImageCoreError) {
                guard let prefix = try LocalFile.read(path, upTo: 8) else { return nil }  // removed meanwhile
                guard let length = DiskCacheFile.metadataLength(prefix),
                      let header = try LocalFile.read(path, upTo: 8 + length), header.count == 8 + length,
                      let metadata = DiskCacheFile.decodeMetadata(header) else {
                    logger.warning("skipping a cache entry whose header is damaged", metadata: ["path": "\(path)"])
                    return nil
                }
                return metadata
            } catch {
                logger.warning("cannot read a cache entry", metadata: ["path": "\(path)", "reason": "\(error.message)"])
                return nil
            }
        }
    }

    /// See `removeAll()`.
    func removeAllEntries() throws(ImageCoreError) {
        try refuseIfReadOnly(directory)
        guard let index else {
            throw ImageCoreError(.io, subject: directory, message: "the disk cache cannot be written: \(writeRefusal ?? "its index cannot be opened")")
        }
        do {
            try index.write { transaction in
                try transaction.deleteAll()
                for name in try LocalDirectory.names(in: entriesDirectory) where name.hasSuffix(".tce") {
                    unlinkLogging(entriesDirectory + "/" + name)
                }
            }
        } catch let error as ImageCoreError {
            throw error
        } catch {
            throw ImageCoreError(.io, subject: index.path, message: "cannot clear the cache index: \(DiskCacheIndex.describe(error))")
        }
        state.withLockedValue { $0.touches = [:] }
        try removeAliases()
    }

    /// See `hasEntries(for:)`.
    func indexHolds(_ urls: [String]) -> [Bool] {
        let names: Set<String>
        if let index {
            names = Set((try? index.allNames()) ?? [])
        } else {
            names = state.withLockedValue { Set($0.snapshot.keys) }
        }
        return urls.map { names.contains(ImageKey.diskEntryName(forKey: $0)) }
    }

    /// Now, for access times: nanoseconds since 1970 (wall clock, so processes agree).
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// A new temp file's path in the entries directory: `.tmp-PID-RANDOM`.
    func newTempPath() -> String {
        entriesDirectory + "/.tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
    }

    /// Removes the entry file `name` and its row.
    ///
    /// - Parameter onlyIf: checked on the file's bytes once the index is locked (no other process changes the entry
    ///   then); false keeps the entry. A file already gone counts as removed.
    /// - Returns: whether the entry was removed.
    @discardableResult
    func removeFile(named name: String, onlyIf condition: (([UInt8]) -> Bool)? = nil) -> Bool {
        guard let index else { return false }
        let path = entriesDirectory + "/" + name
        var removed = false
        do {
            try index.write { transaction in
                if let condition, let file = try? LocalFile.read(path, upTo: .max), !condition(file) { return }
                try transaction.delete(name)
                unlinkLogging(path)
                removed = true
            }
        } catch {
            // The row stays (the index refuses writes): remove the file anyway, and the next open drops the row.
            if let condition, let file = try? LocalFile.read(path, upTo: .max), !condition(file) { return false }
            unlinkLogging(path)
            removed = true
            logger.warning("cannot remove a cache entry from the index", metadata: ["path": "\(index.path)", "reason": "\(DiskCacheIndex.describe(error))"])
        }
        state.withLockedValue { _ = $0.touches.removeValue(forKey: name) }
        return removed
    }

    /// A read found no file for `name`: drops its row if the index has one (removed by hand, or a crash between an
    /// eviction's unlink and its commit), so the totals stay true.
    func forgetMissing(_ name: String) {
        guard let index, (try? index.contains(name)) == true else {
            if isReadOnly { state.withLockedValue { _ = $0.snapshot.removeValue(forKey: name) } }
            return
        }
        // Only if still missing once the index is locked (another process may have stored it since); never an unlink.
        try? index.write { transaction in
            if access(entriesDirectory + "/" + name, F_OK) != 0 { try transaction.delete(name) }
        }
    }

    /// Writes the access times of hits kept in this process to the index. A failure costs only eviction order: logged
    /// at debug level.
    func writeTouches() {
        guard let index else { return }
        let touches = state.withLockedValue { state in
            defer { state.touches = [:] }
            return state.touches
        }
        guard !touches.isEmpty else { return }
        do {
            try index.write { transaction in
                for (name, time) in touches { try transaction.touch(name, lastAccess: time) }
            }
        } catch {
            logger.debug("cannot record cache access times", metadata: ["path": "\(index.path)", "reason": "\(DiskCacheIndex.describe(error))"])
        }
    }

    /// Removes the file at `path`; a failure other than "already gone" is logged (the file stays, and is indexed again
    /// at the next open).
    func unlinkLogging(_ path: String) {
        if unlink(path) != 0, errno != ENOENT {
            logger.warning("cannot remove a cache file", metadata: ["path": "\(path)", "reason": "\(String(cString: strerror(errno)))"])
        }
    }

    /// Writes `parts` one after the other to a new file at `path`, telling a file system that refuses writes (see
    /// `DiskCache+WriteRefusal`) from one write that failed.
    func write(_ parts: [UInt8]..., to path: String) throws(WriteFailure) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            let reason = String(cString: strerror(code))
            if Self.refusesAllWrites(code) { throw .refused(reason) }
            throw .failed(ImageCoreError(.io, subject: path, message: "cannot create a cache file: \(reason)"))
        }
        var failure: Int32?
        for part in parts where failure == nil {
            var written = 0
            failure = part.withUnsafeBytes { raw in
                while written < raw.count {
                    let result = Glibc.write(descriptor, raw.baseAddress! + written, raw.count - written)
                    if result < 0 {
                        if errno == EINTR { continue }
                        return errno
                    }
                    written += result
                }
                return nil
            }
        }
        let closeFailure = close(descriptor) == 0 ? nil : errno  // some file systems report a full disk only here
        if let failure = failure ?? closeFailure {
            unlink(path)
            let reason = String(cString: strerror(failure))
            if Self.refusesAllWrites(failure) { throw .refused(reason) }
            throw .failed(ImageCoreError(.io, subject: path, message: "cannot write a cache file: \(reason)"))
        }
    }

    /// Runs `body` holding an exclusive `flock` on the directory's lock file (shared by every process): for the alias
    /// file's read-modify-write, and for setting a damaged index aside.
    func withLock(_ body: () throws(ImageCoreError) -> Void) throws(ImageCoreError) {
        try Self.withLock(at: lockPath, body)
    }

    /// `withLock` on the lock file at `lockPath`.
    static func withLock(at lockPath: String, _ body: () throws(ImageCoreError) -> Void) throws(ImageCoreError) {
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw ImageCoreError(.io, subject: lockPath, message: "cannot open the cache lock file: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw ImageCoreError(.io, subject: lockPath, message: "cannot lock the cache: \(String(cString: strerror(errno)))")
            }
        }
        defer { flock(descriptor, LOCK_UN) }
        try body()
    }
}

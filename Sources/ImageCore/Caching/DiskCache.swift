import Foundation
public import Logging
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// A persistent cache of validated image bytes and their metadata, one file per URL, bounded in bytes.
///
/// - File names are the SHA-256 of the URL, never URL text. The file also records the URL, so a read for another URL
///   is a miss.
/// - Writes go to a temp file in the same directory, then `rename`: a reader never sees a partial entry; a crash
///   leaves only a temp file, removed at the next start once its writing process is gone.
/// - Every read verifies the SHA-256 checksum; a damaged entry is removed, counted, and reported as a miss.
/// - The byte limit holds after every write: least recently used entries are evicted. Sizes and access times live in
///   an index (`DiskCacheIndex`, SQLite, shared by every process using the directory), so a store, a hit and an
///   eviction cost the same at 100 entries and at 100,000; the index is checked against the directory once, when a
///   cache is opened for writing. Only moving files into place and removing them happens under the index's lock
///   between processes; the entry file is written before, outside it.
/// - A hit's access time is recorded in this process at once and in the index with the next write, or after
///   `touchBatch` hits: eviction here always sees it; another process sees it a little later.
/// - When the file system refuses a write (full, over quota, read-only, no permission), writing stops with one
///   warning; entries already stored are still read. A write is tried again every `writeRetryInterval`, and once such
///   a retry succeeds writing resumes.
///
/// Thread-safety: every method may be called from any thread; I/O runs on the caller's thread (blocking).
public final class DiskCache: Sendable {
    /// Counters since creation.
    public struct Statistics: Sendable, Hashable, Codable {
        /// Reads that returned a verified entry.
        public var hits = 0
        /// Reads that found no entry (or a damaged one).
        public var misses = 0
        /// Entries written.
        public var writes = 0
        /// Entries evicted to respect the byte limit.
        public var evictions = 0
        /// Damaged entries found and removed.
        public var damagedRemoved = 0
        /// Writes the file system refused (full, over quota, read-only, no permission): each stops writing for
        /// `writeRetryInterval` (see `writeRefusal`).
        public var refusedWrites = 0
        /// Entries not written because the file system refused an earlier write (see `writeRefusal`).
        public var skippedWrites = 0
        /// Entries not written because each alone is larger than the whole size limit.
        public var tooLarge = 0
        /// The smallest of those (its file size, metadata included), nil while there is none.
        public var smallestTooLarge: Int?

        /// Entries not stored because the file system refused writes: each refused write and each one skipped after.
        public var notStoredByRefusal: Int { refusedWrites + skippedWrites }

        /// What happened since `earlier` (a snapshot of the same cache): every counter's difference; the smallest
        /// too-large entry is this snapshot's.
        public func since(_ earlier: Statistics) -> Statistics {
            var difference = Statistics()
            difference.hits = hits - earlier.hits
            difference.misses = misses - earlier.misses
            difference.writes = writes - earlier.writes
            difference.evictions = evictions - earlier.evictions
            difference.damagedRemoved = damagedRemoved - earlier.damagedRemoved
            difference.refusedWrites = refusedWrites - earlier.refusedWrites
            difference.skippedWrites = skippedWrites - earlier.skippedWrites
            difference.tooLarge = tooLarge - earlier.tooLarge
            difference.smallestTooLarge = smallestTooLarge
            return difference
        }
    }

    /// The default byte limit: 256 MiB.
    public static let defaultSizeLimit = 256 * 1024 * 1024

    /// The environment variable that names the default directory.
    public static let directoryVariable = "TILECACHE_CACHE_DIR"

    /// The default directory: `$TILECACHE_CACHE_DIR` (unless empty), else `cache` in the working directory.
    public static var defaultDirectory: String {
        ProcessInfo.processInfo.environment[directoryVariable].flatMap { $0.isEmpty ? nil : $0 } ?? "cache"
    }

    /// The name of the index file in a cache directory.
    public static let indexFileName = "index.sqlite"

    /// Hits whose access times are kept in this process before they are written to the index (a write writes them
    /// sooner).
    static let touchBatch = 128

    struct State {
        var statistics = Statistics()
        /// Why the file system refused the last write, and when to try writing again.
        var refusal: (reason: String, retryAt: ContinuousClock.Instant)?
        /// Access times of hits not yet written to the index, by entry name.
        var touches: [String: Int64] = [:]
        /// A read-only cache's view of the directory (entry name to size), taken when it was opened.
        var snapshot: [String: Int] = [:]
        /// A row may not hold its file's size (a commit failed after the rename): the writer row is kept at release, so
        /// the next open checks every size.
        var sizesUnsure = false
    }

    /// How a write failed: the file system refuses writes to the whole directory, or just this one failed.
    enum WriteFailure: Error {
        case refused(String)
        case failed(ImageCoreError)
    }

    /// The cache directory.
    public let directory: String
    /// Largest total size of the entry files.
    public let sizeLimit: Int
    /// How long writing stays off after the file system refused a write.
    public let writeRetryInterval: Duration
    /// Whether the cache was opened with `init(readingOnly:)`: it reads and reports, and changes nothing on disk.
    public let isReadOnly: Bool
    let entriesDirectory: String
    let lockPath: String
    /// The shared index; nil when opened read-only (`State.snapshot` instead).
    let index: DiskCacheIndex?
    let state = NIOLockedValueBox(State())
    let logger: Logger

    /// Opens (creating if needed) the cache at `directory`, removes temp files left by crashed writers, checks the
    /// index against the entries directory (adding files it lacks, dropping rows whose file is gone: O(n), once) and
    /// evicts down to `sizeLimit`.
    ///
    /// - Throws: `.io` naming the directory when it is empty or blank (which would put the cache in the file system's
    ///   root), or cannot be created, read or written, or naming the index file when it cannot be opened.
    public init(directory: String = DiskCache.defaultDirectory, sizeLimit: Int = DiskCache.defaultSizeLimit,
                writeRetryInterval: Duration = .seconds(60),
                logger: Logger = Logger(label: "tilecache.disk-cache")) throws(ImageCoreError) {
        self.directory = directory
        self.sizeLimit = max(1, sizeLimit)
        self.writeRetryInterval = writeRetryInterval
        self.logger = logger
        isReadOnly = false
        entriesDirectory = directory + "/entries"
        lockPath = directory + "/.lock"
        guard !directory.trimmingWhitespace().isEmpty else {
            throw ImageCoreError(.io, subject: "'\(directory)'", message: "the cache directory path is empty")
        }
        do {
            try LocalDirectory.create(entriesDirectory)
        } catch {
            throw ImageCoreError(.io, subject: directory, message: "cannot create the cache directory: \(error.message)")
        }
        guard access(entriesDirectory, W_OK) == 0 else {
            throw ImageCoreError(.io, subject: directory, message: "cache directory is not writable: \(String(cString: strerror(errno)))")
        }
        let indexPath = directory + "/" + Self.indexFileName
        let lockPath = lockPath
        var refusedBecause: String?
        do {
            index = try DiskCacheIndex(path: indexPath, lock: { body throws(ImageCoreError) in
                try Self.withLock(at: lockPath, body)
            }) { reason in
                logger.warning("the cache index is damaged: set aside and rebuilt from the entries",
                               metadata: ["path": "\(indexPath)", "reason": "\(reason)"])
            }
        } catch {
            switch error {
            case .failed(let failure): throw failure
            case .refused(let reason):
                // A file system that refuses writes (full) cannot open the index (SQLite writes its shared-memory file
                // even to read): the entries are still read, from a listing, and nothing is written until restart.
                index = nil
                refusedBecause = reason
            }
        }
        let names: [String]
        do {
            names = try LocalDirectory.names(in: entriesDirectory)
        } catch {
            throw ImageCoreError(.io, subject: directory, message: "cannot read the cache directory: \(error.message)")
        }
        if let refusedBecause {
            var snapshot: [String: Int] = [:]
            var info = stat()
            for name in names where name.hasSuffix(".tce") && stat(entriesDirectory + "/" + name, &info) == 0 {
                snapshot[name] = Int(info.st_size)
            }
            state.withLockedValue { state in
                state.snapshot = snapshot
                state.refusal = (refusedBecause, ContinuousClock.now.advanced(by: .seconds(100 * 365 * 86_400)))
                state.statistics.refusedWrites += 1
            }
            logger.warning("""
                the disk cache cannot be written: its index cannot be opened, so it runs without storing to it until \
                restarted (entries already stored are still read)
                """, metadata: ["directory": "\(directory)", "reason": "\(refusedBecause)"])
            return
        }
        removeAbandonedTempFiles(names)
        try reconcile(names)
    }

    /// Opens an existing cache to read it (`tilecache stats`): nothing is created, locked, cleaned, evicted, touched or
    /// removed, so it works on a read-only copy and leaves a cache in use exactly as it was. Writes are refused. The
    /// entries are listed from the directory (the index is not opened: SQLite's WAL needs to write beside it).
    ///
    /// - Throws: `.io` naming the directory when it holds no cache or its entries cannot be read.
    public init(readingOnly directory: String, logger: Logger = Logger(label: "tilecache.disk-cache")) throws(ImageCoreError) {
        self.directory = directory
        sizeLimit = .max
        writeRetryInterval = .zero
        self.logger = logger
        isReadOnly = true
        entriesDirectory = directory + "/entries"
        lockPath = directory + "/.lock"
        index = nil
        var info = stat()
        guard stat(entriesDirectory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw ImageCoreError(.io, subject: directory, message: "no disk cache here (no entries directory)")
        }
        guard access(entriesDirectory, R_OK | X_OK) == 0 else {
            throw ImageCoreError(.io, subject: directory, message: "cannot read the cache directory: \(String(cString: strerror(errno)))")
        }
        var snapshot: [String: Int] = [:]
        for name in try LocalDirectory.names(in: entriesDirectory) where name.hasSuffix(".tce") {
            guard stat(entriesDirectory + "/" + name, &info) == 0 else { continue }  // removed meanwhile
            snapshot[name] = Int(info.st_size)
        }
        state.withLockedValue { $0.snapshot = snapshot }
    }

    deinit {
        writeTouches()
        // Released cleanly: the next open need not check sizes for this process (see `reconcile`).
        if let index, !state.withLockedValue({ $0.sizesUnsure }) {
            try? index.write { try $0.unregisterWriter(getpid()) }
        }
    }

    /// The refusal of a write to a cache opened read-only.
    func refuseIfReadOnly(_ subject: String) throws(ImageCoreError) {
        guard isReadOnly else { return }
        throw ImageCoreError(.io, subject: subject, message: "the disk cache \(directory) was opened to read only")
    }

    /// A snapshot of the counters.
    public var statistics: Statistics { state.withLockedValue { $0.statistics } }
    /// Entries indexed.
    public var count: Int { totals.count }
    /// Total size of the indexed entry files.
    public var totalBytes: Int { totals.bytes }
    /// While writing is off because the file system refused a write: why (for example "No space left on device").
    public var writeRefusal: String? { state.withLockedValue { $0.refusal?.reason } }

    /// The index's count and total size (zero, logged, when the index cannot be read).
    private var totals: (count: Int, bytes: Int) {
        guard let index else { return state.withLockedValue { ($0.snapshot.count, $0.snapshot.values.reduce(0, +)) } }
        do {
            return try index.totals()
        } catch {
            logger.warning("cannot read the cache index", metadata: ["path": "\(index.path)", "reason": "\(DiskCacheIndex.describe(error))"])
            return (0, 0)
        }
    }

    /// The path of the entry file for `url`.
    public func path(for url: String) -> String { entriesDirectory + "/" + ImageKey.diskEntryName(forKey: url) }


    /// For each of `urls`, whether the index holds an entry file for it, without reading any (the entries are not
    /// verified): for ordering work, never for deciding what to serve. One read of the index's names, whatever the
    /// number of URLs; an index that cannot be read answers "no" for all (only an ordering hint). Blocks: call it on
    /// a thread made for blocking work.
    public func hasEntries(for urls: [String]) -> [Bool] {
        let names: Set<String>
        if let index {
            names = Set((try? index.allNames()) ?? [])
        } else {
            names = state.withLockedValue { Set($0.snapshot.keys) }
        }
        return urls.map { names.contains(ImageKey.diskEntryName(forKey: $0)) }
    }

    /// The verified entry for `url`, or nil. A damaged entry is removed and counted; the read refreshes its access time.
    /// A file that exists but cannot be read is a miss too, logged with the system's reason.
    public func entry(for url: String) -> DiskCacheEntry? {
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

    /// Stores validated `bytes` for `metadata.url`, atomically, then evicts until the byte limit holds.
    ///
    /// - Returns: false when nothing is stored: the entry alone is larger than the whole limit, or the file system
    ///   refuses writes (this one, which logs the one warning, or an earlier one: see `writeRefusal`).
    /// - Throws: `.io` naming the path when the write fails otherwise; the previous entry, if any, is left intact.
    @discardableResult
    public func store(_ bytes: [UInt8], metadata: DiskCacheMetadata) throws(ImageCoreError) -> Bool {
        try refuseIfReadOnly(metadata.url)
        guard let index else {
            state.withLockedValue { $0.statistics.skippedWrites += 1 }  // the index could not be opened (see init)
            return false
        }
        let file: [UInt8]
        do {
            file = try DiskCacheFile.encode(metadata, bytes: bytes)
        } catch {
            throw ImageCoreError(.io, subject: metadata.url, message: "cannot encode cache metadata: \(error)")
        }
        guard file.count <= sizeLimit else {
            state.withLockedValue { state in
                state.statistics.tooLarge += 1
                state.statistics.smallestTooLarge = min(state.statistics.smallestTooLarge ?? .max, file.count)
            }
            return false
        }
        // Skip while writing is off; past the retry time this write is the retry that may turn writing back on.
        let (skip, retrying) = state.withLockedValue { state -> (Bool, Bool) in
            guard let refusal = state.refusal else { return (false, false) }
            guard ContinuousClock.now < refusal.retryAt else { return (false, true) }
            state.statistics.skippedWrites += 1
            return (true, false)
        }
        if skip { return false }
        let name = ImageKey.diskEntryName(forKey: metadata.url)
        let path = entriesDirectory + "/" + name
        let temp = newTempPath()
        do {
            try write(file, to: temp)
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
                try transaction.upsert(name, size: file.count, lastAccess: Self.now())
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

    /// Rewrites the metadata of `url`'s entry (after a 304 revalidation), keeping its bytes.
    public func updateMetadata(_ metadata: DiskCacheMetadata, bytes: [UInt8]) throws(ImageCoreError) {
        try store(bytes, metadata: metadata)
    }

    /// Removes `url`'s entry, if any.
    public func remove(_ url: String) {
        guard !isReadOnly else { return }
        removeFile(named: ImageKey.diskEntryName(forKey: url))
    }

    /// The metadata of every entry, read from each file's header (the bytes are not read or verified). An entry
    /// removed meanwhile is skipped; one that cannot be read, or whose header is damaged, is skipped with a warning.
    public func allMetadata() -> [DiskCacheMetadata] {
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

    /// Removes every entry.
    public func removeAll() throws(ImageCoreError) {
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

    // MARK: - Internals

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
    private func forgetMissing(_ name: String) {
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

    /// Makes the index and the entries directory agree (caller: the writable initialiser): files the index lacks are
    /// added with their size and access time (a crash between a rename and its commit, a cache from before the index),
    /// rows whose file is gone are dropped; then evicts down to the limit. O(n) in the entries, once per open.
    ///
    /// - Parameter names: the entries directory's names, listed before (the transaction waits for other writers, so a
    ///   file one of them moves into place meanwhile may be missing from the list: its row stays, and its file is
    ///   found at the next open if it is missing then).
    private func reconcile(_ names: [String]) throws(ImageCoreError) {
        guard let index else { return }
        let evicted: Int
        do {
            evicted = try index.write { transaction in
                // A writer that ended without releasing its cache (killed, or a commit that failed after a rename) may
                // have left a row with another size than its file's: then every size is checked, once.
                let unclean = try transaction.registerWriter(getpid())
                var indexed = Set(try transaction.allNames())
                for name in names where name.hasSuffix(".tce") {
                    var info = stat()
                    guard indexed.remove(name) == nil else {
                        if unclean, stat(entriesDirectory + "/" + name, &info) == 0 { try transaction.resize(name, to: Int(info.st_size)) }
                        continue
                    }
                    guard stat(entriesDirectory + "/" + name, &info) == 0 else { continue }
                    let access = Int64(info.st_atim.tv_sec) * 1_000_000_000 + Int64(info.st_atim.tv_nsec)
                    try transaction.upsert(name, size: Int(info.st_size), lastAccess: access)
                }
                for name in indexed where access(entriesDirectory + "/" + name, F_OK) != 0 { try transaction.delete(name) }
                let evicted = try transaction.evict(downTo: sizeLimit)
                for row in evicted { unlinkLogging(entriesDirectory + "/" + row.name) }
                return evicted.count
            }
        } catch {
            throw ImageCoreError(.io, subject: index.path, message: "cannot update the cache index: \(DiskCacheIndex.describe(error))")
        }
        state.withLockedValue { $0.statistics.evictions += evicted }
    }

    /// Removes the file at `path`; a failure other than "already gone" is logged (the file stays, and is indexed again
    /// at the next open).
    func unlinkLogging(_ path: String) {
        if unlink(path) != 0, errno != ENOENT {
            logger.warning("cannot remove a cache file", metadata: ["path": "\(path)", "reason": "\(String(cString: strerror(errno)))"])
        }
    }

    /// Turns writing off until `writeRetryInterval` has passed; the first refusal in a row logs the one warning.
    private func refuseWrites(_ reason: String) {
        let first = state.withLockedValue { state in
            defer { state.refusal = (reason, ContinuousClock.now + writeRetryInterval) }
            state.statistics.refusedWrites += 1
            return state.refusal == nil
        }
        guard first else { return }
        logger.warning("""
            the disk cache cannot be written: running without storing to it (entries already stored are still read), \
            trying again every \(writeRetryInterval)
            """, metadata: ["directory": "\(directory)", "reason": "\(reason)"])
    }

    /// Errors that refuse every write to the directory, not just one file's.
    private static func refusesAllWrites(_ code: Int32) -> Bool {
        [ENOSPC, EDQUOT, EROFS, EACCES, EPERM].contains(code)
    }

    func write(_ bytes: [UInt8], to path: String) throws(WriteFailure) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let code = errno
            let reason = String(cString: strerror(code))
            if Self.refusesAllWrites(code) { throw .refused(reason) }
            throw .failed(ImageCoreError(.io, subject: path, message: "cannot create a cache file: \(reason)"))
        }
        var written = 0
        let failure: Int32? = bytes.withUnsafeBytes { raw in
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

    /// Deletes the `.tmp-PID-*` files among `names` whose writing process no longer exists.
    private func removeAbandonedTempFiles(_ names: [String]) {
        for name in names where name.hasPrefix(".tmp-") {
            let pidText = name.dropFirst(5).prefix { $0 != "-" }
            guard let pid = Int32(pidText) else { unlinkLogging(entriesDirectory + "/" + name); continue }
            if pid == getpid() { continue }
            if kill(pid, 0) == -1 && errno == ESRCH {
                unlinkLogging(entriesDirectory + "/" + name)
                logger.info("removed an abandoned temp file", metadata: ["path": "\(entriesDirectory)/\(name)"])
            }
        }
    }
}

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
/// Thread-safety: every method may be called from any task. The cache owns its I/O: every call that reads or writes
/// files or the index runs that work on the blocking pool (`BlockingWork`) while the caller is suspended, so no caller
/// wraps it. The parts live beside this file: the entries (`DiskCache+Entries`), the writes the file system refuses
/// (`DiskCache+WriteRefusal`), what a start cleans up (`DiskCache+Reaper`), aliases, verification and the index.
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
    /// Entries indexed (read from the index on the blocking pool).
    public var count: Int { get async { await BlockingWork.run { self.totals.count } } }
    /// Total size of the indexed entry files (read from the index on the blocking pool).
    public var totalBytes: Int { get async { await BlockingWork.run { self.totals.bytes } } }
    /// While writing is off because the file system refused a write: why (for example "No space left on device").
    public var writeRefusal: String? { state.withLockedValue { $0.refusal?.reason } }

    /// The index's count and total size (zero, logged, when the index cannot be read).
    var totals: (count: Int, bytes: Int) {
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

    // MARK: - Entries (each call's file and index work runs on the blocking pool)

    /// The verified entry for `url`, or nil. A damaged entry is removed and counted; the read refreshes its access time.
    /// A file that exists but cannot be read is a miss too, logged with the system's reason.
    public func entry(for url: String) async -> DiskCacheEntry? {
        await BlockingWork.run { self.readEntry(for: url) }
    }

    /// Stores validated `bytes` for `metadata.url`, atomically, then evicts until the byte limit holds.
    ///
    /// - Returns: false when nothing is stored: the entry alone is larger than the whole limit, or the file system
    ///   refuses writes (this one, which logs the one warning, or an earlier one: see `writeRefusal`).
    /// - Throws: `.io` naming the path when the write fails otherwise; the previous entry, if any, is left intact.
    @discardableResult
    public func store(_ bytes: [UInt8], metadata: DiskCacheMetadata) async throws(ImageCoreError) -> Bool {
        try await BlockingWork.run { () throws(ImageCoreError) in try self.writeEntry(bytes, metadata: metadata) }
    }

    /// Removes `url`'s entry, if any.
    public func remove(_ url: String) async {
        await BlockingWork.run { self.removeEntry(url) }
    }

    /// The metadata of every entry, read from each file's header (the bytes are not read or verified). An entry
    /// removed meanwhile is skipped; one that cannot be read, or whose header is damaged, is skipped with a warning.
    public func allMetadata() async -> [DiskCacheMetadata] {
        await BlockingWork.run { self.readAllMetadata() }
    }

    /// Removes every entry.
    public func removeAll() async throws(ImageCoreError) {
        try await BlockingWork.run { () throws(ImageCoreError) in try self.removeAllEntries() }
    }

    /// For each of `urls`, whether the index holds an entry file for it, without reading any (the entries are not
    /// verified): for ordering work, never for deciding what to serve. One read of the index's names, whatever the
    /// number of URLs; an index that cannot be read answers "no" for all (only an ordering hint).
    public func hasEntries(for urls: [String]) async -> [Bool] {
        await BlockingWork.run { self.indexHolds(urls) }
    }
}

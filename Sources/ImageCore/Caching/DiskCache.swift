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
/// - The byte limit holds after every write: least recently used entries (by access time, which reads update) are
///   evicted under an exclusive `flock` on `.lock`, after re-reading the directory if another process changed it,
///   so two processes sharing a directory keep it consistent.
/// - When the file system refuses a write (full, over quota, read-only, no permission), writing stops with one
///   warning; entries already stored are still read. A write is tried again every `writeRetryInterval`, and once such
///   a retry succeeds writing resumes.
///
/// Thread-safety: every method may be called from any thread; I/O runs on the caller's thread.
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

    private struct IndexEntry { var size: Int; var lastAccess: Double }
    private struct State {
        var index: [String: IndexEntry] = [:]
        var totalBytes = 0
        var directoryStamp: timespec?
        var statistics = Statistics()
        /// Why the file system refused the last write, and when to try writing again.
        var refusal: (reason: String, retryAt: ContinuousClock.Instant)?
    }

    /// How a write failed: the file system refuses writes to the whole directory, or just this one failed.
    private enum WriteFailure: Error {
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
    private let entriesDirectory: String
    private let lockPath: String
    private let state = NIOLockedValueBox(State())
    private let logger: Logger

    /// Opens (creating if needed) the cache at `directory`, removes temp files left by crashed writers, and indexes
    /// the entries.
    ///
    /// - Throws: `.io` naming the directory when it is empty or blank (which would put the cache in the file system's
    ///   root), or cannot be created, read or written.
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
        removeAbandonedTempFiles()
        try withLock { () throws(ImageCoreError) in
            self.state.withLockedValue { self.rescan(&$0) }
            self.state.withLockedValue { self.evict(&$0) }
        }
    }

    /// Opens an existing cache to read it (`tilecache stats`): nothing is created, locked, cleaned, evicted, touched or
    /// removed, so it works on a read-only copy and leaves a cache in use exactly as it was. Writes are refused.
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
        var info = stat()
        guard stat(entriesDirectory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw ImageCoreError(.io, subject: directory, message: "no disk cache here (no entries directory)")
        }
        guard access(entriesDirectory, R_OK | X_OK) == 0 else {
            throw ImageCoreError(.io, subject: directory, message: "cannot read the cache directory: \(String(cString: strerror(errno)))")
        }
        state.withLockedValue { rescan(&$0) }
    }

    /// The refusal of a write to a cache opened read-only.
    private func refuseIfReadOnly(_ subject: String) throws(ImageCoreError) {
        guard isReadOnly else { return }
        throw ImageCoreError(.io, subject: subject, message: "the disk cache \(directory) was opened to read only")
    }

    /// A snapshot of the counters.
    public var statistics: Statistics { state.withLockedValue { $0.statistics } }
    /// Entries indexed.
    public var count: Int { state.withLockedValue { $0.index.count } }
    /// Total size of the indexed entry files.
    public var totalBytes: Int { state.withLockedValue { $0.totalBytes } }
    /// While writing is off because the file system refused a write: why (for example "No space left on device").
    public var writeRefusal: String? { state.withLockedValue { $0.refusal?.reason } }

    /// The path of the entry file for `url`.
    public func path(for url: String) -> String { entriesDirectory + "/" + Self.entryName(for: url) }

    /// The name of the entry file for `url`: the SHA-256 of the URL, in hex, and `.tce`.
    static func entryName(for url: String) -> String { sha256Hex(Array(url.utf8)) + ".tce" }

    /// Whether the index holds an entry file for `url`, without reading it (another process may have changed the
    /// directory since the last scan, and the entry is not verified): for ordering work, never for deciding what to
    /// serve.
    public func hasEntry(for url: String) -> Bool {
        let name = Self.entryName(for: url)
        return state.withLockedValue { $0.index[name] != nil }
    }

    /// The verified entry for `url`, or nil. A damaged entry is removed and counted; the read refreshes its access time.
    /// A file that exists but cannot be read is a miss too, logged with the system's reason.
    public func entry(for url: String) -> DiskCacheEntry? {
        let path = path(for: url)
        let name = (path as NSString).lastPathComponent
        let file: [UInt8]?
        do {
            file = try LocalFile.read(path, upTo: .max)
        } catch {
            logger.warning("cannot read a cache entry", metadata: ["url": "\(url)", "path": "\(path)", "reason": "\(error.message)"])
            file = nil
        }
        guard let file else {
            state.withLockedValue { state in
                state.statistics.misses += 1
                if let gone = state.index.removeValue(forKey: name) { state.totalBytes -= gone.size }
            }
            return nil
        }
        switch DiskCacheFile.decode(file, expectedURL: url) {
        case .success(let entry):
            if !isReadOnly { touch(path) }
            state.withLockedValue { state in
                state.statistics.hits += 1
                state.index[name]?.lastAccess = Date().timeIntervalSince1970
            }
            return entry
        case .failure(.otherURL):
            state.withLockedValue { $0.statistics.misses += 1 }
            return nil
        case .failure(.damaged(let why)):
            guard !isReadOnly else {
                state.withLockedValue { $0.statistics.misses += 1 }
                return nil
            }
            logger.warning("removing damaged cache entry", metadata: ["url": "\(url)", "path": "\(path)", "reason": "\(why)"])
            removeFile(named: name)
            state.withLockedValue { state in
                state.statistics.misses += 1
                state.statistics.damagedRemoved += 1
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
        let path = path(for: metadata.url)
        let temp = entriesDirectory + "/.tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
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
        // Only a retry turns writing back on: a write that began before another was refused may still fit (a small
        // file on a nearly full disk), which says nothing about the next one.
        let resumed = retrying && state.withLockedValue { state in
            defer { state.refusal = nil }
            return state.refusal != nil
        }
        if resumed { logger.info("the disk cache is writable again", metadata: ["directory": "\(directory)"]) }
        try withLock { () throws(ImageCoreError) in
            try self.state.withLockedValueTyped { state throws(ImageCoreError) in
                if self.directoryChanged(since: state.directoryStamp) { self.rescan(&state) }
                guard rename(temp, path) == 0 else {
                    let reason = String(cString: strerror(errno))
                    unlink(temp)
                    throw ImageCoreError(.io, subject: path, message: "cannot move the cache entry into place: \(reason)")
                }
                let name = (path as NSString).lastPathComponent
                if let previous = state.index[name] { state.totalBytes -= previous.size }
                state.index[name] = IndexEntry(size: file.count, lastAccess: Date().timeIntervalSince1970)
                state.totalBytes += file.count
                state.statistics.writes += 1
                self.evict(&state)
                state.directoryStamp = self.directoryStamp()
            }
        }
        return true
    }

    /// Rewrites the metadata of `url`'s entry (after a 304 revalidation), keeping its bytes.
    public func updateMetadata(_ metadata: DiskCacheMetadata, bytes: [UInt8]) throws(ImageCoreError) {
        try store(bytes, metadata: metadata)
    }

    /// Removes `url`'s entry, if any.
    public func remove(_ url: String) {
        guard !isReadOnly else { return }
        removeFile(named: (path(for: url) as NSString).lastPathComponent)
    }

    /// The metadata of every entry, read from each file's header (the bytes are not read or verified). An entry
    /// removed meanwhile is skipped; one that cannot be read, or whose header is damaged, is skipped with a warning.
    public func allMetadata() -> [DiskCacheMetadata] {
        let names = state.withLockedValue { Array($0.index.keys) }
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

    /// The outcome of `verifyAll`.
    public struct Verification: Sendable, Hashable, Codable {
        /// Entries whose checksum matched and whose bytes decoded.
        public var valid = 0
        /// Entries whose file was damaged or whose bytes no longer decode: removed (kept when opened read-only).
        public var removed = 0
        /// Temp files left in the entries directory (a writer is running, or one crashed).
        public var tempFiles = 0
        /// Total size of the entries after verification.
        public var totalBytes = 0

        /// Nothing verified yet (a cache with no entries directory has nothing else to report).
        public init() {}
    }

    /// Reads every entry file, verifies its checksum and decodes it with `inspector` (WebP variants: the checksum only);
    /// removes what fails.
    ///
    /// - Throws: `.io` when the entries directory cannot be listed or an entry file cannot be read (not for files
    ///   removed meanwhile).
    public func verifyAll(inspector: ImageInspector = ImageInspector()) throws(ImageCoreError) -> Verification {
        var verification = Verification()
        let names = try LocalDirectory.names(in: entriesDirectory)
        verification.tempFiles = names.filter { $0.hasPrefix(".tmp-") }.count
        for name in names where name.hasSuffix(".tce") {
            let path = entriesDirectory + "/" + name
            guard let file = try LocalFile.read(path, upTo: .max) else { continue }  // removed meanwhile
            // A variant in a format the inspector does not decode (WebP) is checked by its SHA-256 alone.
            guard case .success(let entry) = DiskCacheFile.decode(file, expectedURL: nil),
                  !entry.metadata.format.isDecodable
                    || (try? inspector.validate(entry.bytes, subject: entry.metadata.url, contentType: entry.metadata.contentType)) != nil else {
                if !isReadOnly { removeFile(named: name) }
                verification.removed += 1
                continue
            }
            verification.valid += 1
        }
        verification.totalBytes = totalBytes
        return verification
    }

    // MARK: - Aliases

    /// The file remembering which URL serves an image under another spelling (`aliases.json`: URL to URL).
    private var aliasesPath: String { directory + "/aliases.json" }

    /// The URL that served `url`'s image under another spelling (see `rememberAlias`), or nil.
    public func alias(for url: String) -> String? { readAliases()[url] }

    /// Remembers that `url`'s image is served by `target` (nil forgets it), for every process using this directory.
    ///
    /// - Throws: `.io` naming the file when it cannot be written; the previous file is left intact.
    public func rememberAlias(_ target: String?, for url: String) throws(ImageCoreError) {
        try refuseIfReadOnly(aliasesPath)
        try withLock { () throws(ImageCoreError) in
            var aliases = self.readAliases()
            guard aliases[url] != target else { return }
            aliases[url] = target
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            let bytes: [UInt8]
            do {
                bytes = [UInt8](try encoder.encode(aliases))
            } catch {
                throw ImageCoreError(.io, subject: self.aliasesPath, message: "cannot encode the aliases: \(error)")
            }
            let temp = self.entriesDirectory + "/.tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
            do throws(WriteFailure) {
                try self.write(bytes, to: temp)
            } catch {
                switch error {
                case .refused(let reason): throw ImageCoreError(.io, subject: self.aliasesPath, message: reason)
                case .failed(let failure): throw failure
                }
            }
            guard rename(temp, self.aliasesPath) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(temp)
                throw ImageCoreError(.io, subject: self.aliasesPath, message: "cannot move the alias file into place: \(reason)")
            }
        }
    }

    /// The remembered aliases; empty when the file is missing, and (with a warning) when it cannot be read or parsed:
    /// it is a cache, and a lost alias is found again.
    private func readAliases() -> [String: String] {
        do {
            guard let bytes = try LocalFile.read(aliasesPath, upTo: .max), !bytes.isEmpty else { return [:] }
            return try JSONDecoder().decode([String: String].self, from: Data(bytes))
        } catch let error as ImageCoreError {
            logger.warning("cannot read the aliases file", metadata: ["path": "\(aliasesPath)", "reason": "\(error.message)"])
        } catch {
            logger.warning("the aliases file is not a JSON object of URLs", metadata: ["path": "\(aliasesPath)", "reason": "\(error)"])
        }
        return [:]
    }

    /// Removes every entry.
    public func removeAll() throws(ImageCoreError) {
        try refuseIfReadOnly(directory)
        try withLock { () throws(ImageCoreError) in
            self.state.withLockedValue { state in
                self.rescan(&state)
                for name in state.index.keys { unlink(self.entriesDirectory + "/" + name) }
                unlink(self.aliasesPath)
                state.index.removeAll()
                state.totalBytes = 0
                state.directoryStamp = self.directoryStamp()
            }
        }
    }

    // MARK: - Internals

    private func removeFile(named name: String) {
        unlinkLogging(entriesDirectory + "/" + name)
        state.withLockedValue { state in
            if let gone = state.index.removeValue(forKey: name) { state.totalBytes -= gone.size }
        }
    }

    /// Evicts least recently used entries until the total fits (caller holds the file lock and the state lock).
    private func evict(_ state: inout State) {
        guard state.totalBytes > sizeLimit else { return }
        let oldestFirst = state.index.sorted { $0.value.lastAccess < $1.value.lastAccess }
        for (name, entry) in oldestFirst where state.totalBytes > sizeLimit {
            unlinkLogging(entriesDirectory + "/" + name)
            state.index[name] = nil
            state.totalBytes -= entry.size
            state.statistics.evictions += 1
        }
    }

    /// Re-reads the directory (caller holds the state lock; the file lock too when it will write).
    private func rescan(_ state: inout State) {
        state.index.removeAll()
        state.totalBytes = 0
        guard let names = entryNames(else: "cannot list the disk cache: it is taken to be empty") else { return }
        for name in names where name.hasSuffix(".tce") {
            var info = stat()
            guard stat(entriesDirectory + "/" + name, &info) == 0 else { continue }
            let access = Double(info.st_atim.tv_sec) + Double(info.st_atim.tv_nsec) / 1e9
            state.index[name] = IndexEntry(size: Int(info.st_size), lastAccess: access)
            state.totalBytes += Int(info.st_size)
        }
        state.directoryStamp = directoryStamp()
    }

    private func directoryStamp() -> timespec? {
        var info = stat()
        guard stat(entriesDirectory, &info) == 0 else { return nil }
        return info.st_mtim
    }

    private func directoryChanged(since stamp: timespec?) -> Bool {
        guard let stamp, let now = directoryStamp() else { return true }
        return stamp.tv_sec != now.tv_sec || stamp.tv_nsec != now.tv_nsec
    }

    /// Marks an entry as just used: sets its access time (explicitly, whatever the mount's atime policy). A failure
    /// only costs eviction order; it is logged at debug level (an entry removed meanwhile is not a failure).
    private func touch(_ path: String) {
        // UTIME_NOW for the access time, UTIME_OMIT for the modification time (macros Swift cannot import).
        var times = [timespec(tv_sec: 0, tv_nsec: (1 << 30) - 1), timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2)]
        if utimensat(AT_FDCWD, path, &times, 0) != 0, errno != ENOENT {
            logger.debug("cannot set a cache entry's access time", metadata: ["path": "\(path)", "reason": "\(String(cString: strerror(errno)))"])
        }
    }

    /// Removes the file at `path`; a failure other than "already gone" is logged (the file stays, and is counted again
    /// at the next rescan).
    private func unlinkLogging(_ path: String) {
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

    private func write(_ bytes: [UInt8], to path: String) throws(WriteFailure) {
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

    /// Runs `body` holding an exclusive `flock` on the directory's lock file (shared by every process).
    private func withLock(_ body: () throws(ImageCoreError) -> Void) throws(ImageCoreError) {
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

    /// The names in the entries directory, or nil after logging `warning` with the system's reason.
    private func entryNames(else warning: Logger.Message) -> [String]? {
        do {
            return try LocalDirectory.names(in: entriesDirectory)
        } catch {
            logger.warning(warning, metadata: ["reason": "\(error.message)"])
            return nil
        }
    }

    /// Deletes `.tmp-PID-*` files whose writing process no longer exists.
    private func removeAbandonedTempFiles() {
        guard let names = entryNames(else: "cannot list the disk cache to remove abandoned temp files") else { return }
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

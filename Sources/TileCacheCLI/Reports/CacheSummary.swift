import Catalogue
public import Foundation
public import ImageCore

#if canImport(Glibc)
import Glibc
#endif

/// What a disk cache holds and its latest runs: the report of `tilecache stats`.
public struct CacheSummary: Sendable, Encodable {
    /// Entries and bytes of one kind of image.
    public struct KindCount: Sendable, Encodable, Equatable {
        /// `thumbnail`, `full` or `other`.
        public var kind: String
        /// Entries.
        public var entries: Int
        /// Bytes of the stored images.
        public var bytes: Int
    }

    /// One logged run, summarised.
    public struct RunLine: Sendable, Encodable, Equatable {
        /// When it ended.
        public var date: Date
        /// The command.
        public var command: String
        /// URLs asked for.
        public var requested: Int
        /// Hit rate 0...1.
        public var hitRate: Double
        /// Downloads.
        public var networkFetches: Int
        /// Broken URLs.
        public var failed: Int
        /// Wall time.
        public var durationSeconds: Double
    }

    /// The cache directory.
    public var directory: String
    /// Entries held.
    public var entries: Int
    /// Bytes of the entry files.
    public var bytes: Int
    /// Entries by kind.
    public var byKind: [KindCount]
    /// When the oldest entry was stored (or last revalidated).
    public var oldest: Date?
    /// When the newest entry was stored.
    public var newest: Date?
    /// The latest runs, oldest first.
    public var runs: [RunLine]
    /// How many runs were asked for (`--last`); 0 leaves the runs out of the text report.
    public var runsAsked: Int
    /// The result of `--verify`, when asked for.
    public var verification: DiskCache.Verification?
    /// What the `--shared-store` holds, when asked for.
    public var sharedStore: SharedStoreSummary?

    /// Refuses a cache directory that does not exist or is not a directory: a mistyped `--cache-dir` must not read
    /// as an empty cache. (A directory without entries is a cache nothing was stored in yet.)
    ///
    /// - Throws: `InputError` naming the path and the reason.
    public static func requireDirectory(_ path: String) throws(InputError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            throw InputError("\(path): \(reason): no disk cache there (check --cache-dir; a prefetch creates one)")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw InputError("\(path) is not a directory: --cache-dir names the disk cache's directory")
        }
    }

    /// Reads the cache at `cacheDirectory` and its run log, changing nothing (creating nothing when there is none).
    ///
    /// - Throws: `InputError` when `cacheDirectory` is missing or not a directory (`requireDirectory`), or its
    ///   entries cannot be read.
    public init(cacheDirectory: String, lastRuns: Int) async throws {
        try Self.requireDirectory(cacheDirectory)
        directory = cacheDirectory
        runsAsked = lastRuns
        var metadata: [DiskCacheMetadata] = []
        if FileManager.default.fileExists(atPath: cacheDirectory + "/entries") {
            do {
                let cache = try DiskCache(readingOnly: cacheDirectory)
                metadata = await cache.allMetadata()
                bytes = await cache.totalBytes
            } catch {
                throw InputError("\(error.subject): \(error.message)")
            }
        } else {
            bytes = 0
        }
        entries = metadata.count
        var kinds: [String: KindCount] = [:]
        for entry in metadata {
            let kind = Self.kind(of: entry.url)
            kinds[kind, default: KindCount(kind: kind, entries: 0, bytes: 0)].entries += 1
            kinds[kind]!.bytes += entry.byteCount
        }
        byKind = ["thumbnail", "full", "other"].compactMap { kinds[$0] }
        oldest = metadata.map(\.storedAt).min()
        newest = metadata.map(\.storedAt).max()
        runs = RunLog.entries(cacheDirectory: cacheDirectory).suffix(lastRuns).map {
            RunLine(date: $0.date, command: $0.command, requested: $0.report.requested, hitRate: $0.report.hitRate,
                    networkFetches: $0.report.networkFetches, failed: $0.report.failed, durationSeconds: $0.report.durationSeconds)
        }
    }

    /// `thumbnail` or `full` for a catalogue image URL (on any host), else `other`.
    static func kind(of url: String) -> String {
        if url.contains("#") { return "variant" }  // a thumbnail the service made (source URL + options)
        return ImageURLBuilder.image(at: url)?.kind.rawValue ?? "other"
    }

    func render(_ format: OutputFormat) -> String {
        let dateFormatter = ISO8601DateFormatter()
        var text = "disk cache \(directory): \(entries) entries, \(ByteSize.format(bytes))\n"
        if let verification {
            text += "verified: \(verification.valid) valid, \(verification.removed) damaged and removed, \(verification.tempFiles) temp files\n"
            for failure in verification.failures {
                text += "  removed \(failure.path)\(failure.url.map { " (\($0))" } ?? ""): \(failure.reason)\n"
            }
        }
        if let oldest, let newest {
            text += "oldest \(dateFormatter.string(from: oldest)), newest \(dateFormatter.string(from: newest))\n"
        }
        if !byKind.isEmpty {
            var kinds = TextTable(headers: ["kind", "entries", "bytes"], rightAligned: [1, 2])
            kinds.rows = byKind.map { [$0.kind, "\($0.entries)", ByteSize.format($0.bytes)] }
            text += "\n" + kinds.render(format)
        }
        if let sharedStore {
            text += "shared store \(sharedStore.store) at \(sharedStore.endpoint): \(sharedStore.objects) objects, \(ByteSize.format(sharedStore.bytes))\n"
        }
        if runsAsked == 0 {
            // --last 0: the runs were not asked for.
        } else if runs.isEmpty {
            text += "\nno runs logged yet\n"
        } else {
            var table = TextTable(headers: ["date", "command", "requested", "hit rate", "network", "failed", "wall time"],
                                  rightAligned: [2, 3, 4, 5, 6])
            table.rows = runs.map {
                [dateFormatter.string(from: $0.date), $0.command, "\($0.requested)", String(format: "%.1f%%", $0.hitRate * 100),
                 "\($0.networkFetches)", "\($0.failed)", String(format: "%.3f s", $0.durationSeconds)]
            }
            text += "\nlast runs:\n" + table.render(format)
        }
        return text
    }
}

/// Objects and bytes under a shared store's prefix (ListObjectsV2), for `stats --shared-store`.
public struct SharedStoreSummary: Sendable, Encodable, Equatable {
    /// `s3://BUCKET[/PREFIX]`.
    public var store: String
    /// The endpoint it was read from.
    public var endpoint: String
    /// Objects under the prefix: originals and variants.
    public var objects: Int
    /// Their bytes.
    public var bytes: Int
}

/// A client's model of what `tilecache ... --format json` prints, written from docs/cli.md, never from the command's
/// own report types: a field the command renames or retypes fails to decode, so the tests that read it fail.
///
/// Each model holds the keys the docs promise (non-optional where every report has them; `null` reads as nil).
public enum CLIJSON {
    /// One run of `prefetch` (docs/cli.md, "Keys of a run"), also each of `runs`.
    public struct PrefetchRun: Decodable, Sendable {
        /// One broken URL.
        public struct Failure: Decodable, Sendable {
            public let url: String
            public let reason: String
            public let message: String
        }

        /// A catalogue photo found under another spelling.
        public struct Alias: Decodable, Sendable {
            public let url: String
            public let servedBy: String
        }

        /// Percentiles (ms) of one outcome.
        public struct Latency: Decodable, Sendable {
            public let count: Int
            public let p50: Double
            public let p90: Double
            public let p99: Double
            public let max: Double
        }

        /// With `--shared-store`: the store, its state and what it did.
        public struct SharedStore: Decodable, Sendable {
            public let store: String
            /// `ok` or `degraded`.
            public let status: String
            public let statistics: ServiceJSON.SharedStoreStatistics
        }

        public let run: Int
        public let requested: Int
        public let succeeded: Int
        public let failed: Int
        public let expectedMissing: Int
        public let notCompleted: Int
        public let interrupted: Bool
        public let skippedKnownMissing: Int
        public let memoryHits: Int
        public let diskHits: Int
        public let revalidated: Int
        public let sharedHits: Int
        public let networkFetches: Int
        /// 0-1, over the URLs that ended.
        public let hitRate: Double
        public let bytesDownloaded: Int
        public let durationSeconds: Double
        public let imagesPerSecond: Double
        /// By outcome (`failure`, `expectedMissing`, `networkFetch`, `memoryHit`, ...).
        public let latencyMilliseconds: [String: Latency]
        public let failures: [Failure]
        public let expectedMissingURLs: [String]
        public let aliases: [Alias]
        public let warnings: [String]
        public let sharedStore: SharedStore?
        /// With `--sizes`: the variants made of the images fetched.
        public let variants: Variants?

        /// `variants` (docs/cli.md, "--sizes").
        public struct Variants: Decodable, Sendable {
            public let widths: [Int]
            public let formats: [String]
            public let requested: Int
            public let made: Int
            public let failures: [Failure]
        }
    }

    /// `prefetch` (and `demo`): the last run's keys at the top level, and with `--repeat N` (N > 1) every run in `runs`.
    @dynamicMemberLookup
    public struct Prefetch: Decodable, Sendable {
        /// The top-level keys: the last run's.
        public let last: PrefetchRun
        /// Every run, with `--repeat` and in `demo`; nil for a single run.
        public let runs: [PrefetchRun]?

        private enum CodingKeys: String, CodingKey { case runs }

        public init(from decoder: any Decoder) throws {
            last = try PrefetchRun(from: decoder)
            runs = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent([PrefetchRun].self, forKey: .runs)
        }

        public subscript<Value>(dynamicMember keyPath: KeyPath<PrefetchRun, Value>) -> Value { last[keyPath: keyPath] }
    }

    /// `validate` (docs/cli.md, "JSON: an object with checked, ok, broken, expectedMissing and results").
    public struct Validation: Decodable, Sendable {
        /// One URL checked.
        public struct Result: Decodable, Sendable {
            public let url: String
            public let ok: Bool
            public let status: Int?
            public let reason: String?
            public let message: String?
            public let format: String?
            public let contentType: String?
            public let width: Int?
            public let height: Int?
            public let bytes: Int?
            public let timeMilliseconds: Double?
            public let warnings: [String]
            public let expectedMissing: Bool
            /// The other spelling that served a catalogue photo.
            public let servedBy: String?
        }

        public let checked: Int
        public let ok: Int
        public let broken: Int
        public let expectedMissing: Int
        public let results: [Result]
    }

    /// One element of the array `inspect` prints (docs/cli.md, `tilecache inspect`).
    public struct FileInspection: Decodable, Sendable {
        public let path: String
        public let valid: Bool
        /// `jpeg`, `png`, `webp`, another sniffed format, or nil.
        public let format: String?
        /// As stored.
        public let width: Int?
        public let height: Int?
        public let bytes: Int?
        /// Nil when valid.
        public let reason: String?
        public let message: String?
        public let warnings: [String]
        /// The EXIF orientation a JPEG declares.
        public let orientation: Int?
        /// What a viewer shows.
        public let uprightWidth: Int?
        public let uprightHeight: Int?
    }

    /// `stats` (docs/cli.md, `tilecache stats`).
    public struct CacheStats: Decodable, Sendable {
        /// Entries and bytes of one kind (`thumbnail`, `full`, `variant`, `other`).
        public struct Kind: Decodable, Sendable {
            public let kind: String
            public let entries: Int
            public let bytes: Int
        }

        /// One run of the run log.
        public struct Run: Decodable, Sendable {
            public let command: String
            public let requested: Int
        }

        /// With `--verify`.
        public struct Verification: Decodable, Sendable {
            /// A damaged entry removed.
            public struct Failure: Decodable, Sendable {
                public let path: String
                /// When the entry's header is readable.
                public let url: String?
                public let reason: String
            }

            public let valid: Int
            public let removed: Int
            public let tempFiles: Int
            public let failures: [Failure]
        }

        /// With `--shared-store`: the objects under the prefix.
        public struct SharedStore: Decodable, Sendable {
            public let store: String
            public let endpoint: String
            public let objects: Int
            public let bytes: Int
        }

        public let entries: Int
        public let bytes: Int
        public let byKind: [Kind]
        /// ISO 8601; nil for an empty cache.
        public let oldest: String?
        public let newest: String?
        public let runs: [Run]
        public let verification: Verification?
        public let sharedStore: SharedStore?
    }
}

import Foundation
extension ImagePipeline {
    /// Everything a pipeline is built from. Each limit has one knob here.
    public struct Configuration: Sendable {
        /// What the memory tier holds (default `.decoded`, the seed app's model).
        public var memoryContent = MemoryContent.decoded
        /// Most entries in memory (default 100, the seed's `NSCache`).
        public var memoryCountLimit = MemoryCache<String, CachedImage>.defaultCountLimit
        /// Most bytes in memory: pixel bytes or encoded bytes, as `memoryContent` says (default 10 MiB).
        public var memoryCostLimit = MemoryCache<String, CachedImage>.defaultCostLimit
        /// What the memory tier keeps when it is full (default `.lru`; `.tinyLFU` admits by frequency).
        public var memoryPolicy = MemoryCache<String, CachedImage>.Policy.lru
        /// Disk cache directory; nil runs without a disk cache (default `DiskCache.defaultDirectory`).
        public var diskDirectory: String? = DiskCache.defaultDirectory
        /// Disk cache byte limit (default 256 MiB).
        public var diskSizeLimit = DiskCache.defaultSizeLimit
        /// How long a disk entry is fresh when the server sent no max-age (default 7 days).
        public var defaultFreshness: Duration = .seconds(7 * 24 * 3600)
        /// How long an answer that an image is missing (404 or 410) is remembered when upstream's headers say
        /// nothing: not asked again meanwhile, in this process or (through the disk cache) another (default 60 s; zero
        /// asks every time). Upstream's `Cache-Control` or `Expires` sets it otherwise, at most a day (`NegativeCache`).
        public var negativeLifetime: Duration = .seconds(60)
        /// Serve a stale disk entry when revalidating it fails for a transient reason (default true).
        public var serveStaleOnError = true
        /// Transfers in flight (`maxConcurrentTransfers`, which also sets the engine's connection limits), retries
        /// and per-transfer options.
        public var downloader = Downloader.Configuration()
        /// Loads (requests past the memory tier) that may wait at once; one more fails at once with `.overloaded`.
        /// Nil: no bound (default; a server sets one).
        public var maxPendingLoads: Int?
        /// Variants made at once (decode, resize, encode on the blocking pool); default: the number of cores.
        public var maxConcurrentProcessing = ProcessInfo.processInfo.activeProcessorCount
        /// Variants that may wait for one of those slots; one more fails at once with `.overloaded`. Nil: no bound
        /// (default; a server sets one, since every option multiplies the variants a script can ask for).
        public var maxQueuedProcessing: Int?
        /// The longest a request waits, from its start: past it, it fails with `.deadlineExceeded` (the load goes on for other
        /// requests sharing it), and its transfers are cut to fit inside it. Nil: only the transfers' own timeouts.
        public var requestTimeout: Duration?
        /// Validation limits.
        public var inspector = ImageInspector()
        /// The data tiers after the local disk, made when the pipeline is built (a fleet's shared store: the
        /// SharedStore module's `sharedStore`); none by default.
        public var extraTiers: [DataTierFactory] = []

        /// The defaults.
        public init() {}
    }
}

extension ImagePipeline {
    /// Everything a pipeline is built from.
    public struct Configuration: Sendable {
        /// Most decoded images in memory (default 100).
        public var memoryCountLimit = MemoryCache<String, CachedImage>.defaultCountLimit
        /// Most decoded pixel bytes in memory (default 10 MiB).
        public var memoryCostLimit = MemoryCache<String, CachedImage>.defaultCostLimit
        /// Disk cache directory; nil runs without a disk cache (default `DiskCache.defaultDirectory`).
        public var diskDirectory: String? = DiskCache.defaultDirectory
        /// Disk cache byte limit (default 256 MiB).
        public var diskSizeLimit = DiskCache.defaultSizeLimit
        /// How long a disk entry is fresh when the server sent no max-age (default 7 days).
        public var defaultFreshness: Duration = .seconds(7 * 24 * 3600)
        /// Serve a stale disk entry when revalidating it fails for a transient reason (default true).
        public var serveStaleOnError = true
        /// Downloader limits, retries and per-transfer options.
        public var downloader = Downloader.Configuration()
        /// Connection limits of the transfer engine.
        public var engine = TransferEngine.Configuration()
        /// Validation limits.
        public var inspector = ImageInspector()

        /// The defaults.
        public init() {}
    }
}

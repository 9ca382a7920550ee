import ArgumentParser
import Foundation
import ImageCore
import SharedStore
import Logging

/// Cache and network options shared by the commands that fetch.
struct PipelineOptions: ParsableArguments {
    @OptionGroup var cacheDirectory: CacheDirectoryOption

    @OptionGroup var sharedStore: SharedStoreOptions

    @Flag(help: "Run without a disk cache: store nothing, log nothing (otherwise a cache directory that cannot be used is an error).")
    var noDiskCache = false

    @Option(help: ArgumentHelp("What the memory tier holds: decoded (pixels, the seed app's cache) or encoded (bytes, as served).",
                               valueName: "decoded|encoded"),
            transform: { text in
                guard let content = MemoryContent(rawValue: text) else {
                    throw ValidationError("--memory-content must be decoded or encoded, got '\(text)'")
                }
                return content
            })
    var memoryContent: MemoryContent?

    @Option(help: ArgumentHelp("What the memory tier keeps when full: lru (least recently used goes) or tinylfu (W-TinyLFU: a new image displaces another only if asked for more often; scans do not flush it) (default: lru).",
                               valueName: "lru|tinylfu"),
            transform: { text in
                guard let policy = MemoryCache<String, CachedImage>.Policy(rawValue: text.lowercased()) else {
                    throw ValidationError("--memory-policy must be lru or tinylfu, got '\(text)'")
                }
                return policy
            })
    var memoryPolicy: MemoryCache<String, CachedImage>.Policy?

    @Option(help: "Most images kept in memory (default: 100; serve: 100000).")
    var memoryCount: Int?

    @Option(help: "Most bytes kept in memory, pixels or encoded bytes as --memory-content says, e.g. 10MiB (default: 10MiB; serve: 64MiB).",
            transform: { try ByteSize(parsing: $0) })
    var memoryBytes: ByteSize?

    @Option(help: "Disk cache size limit, e.g. 1GiB (default: \(ByteSize.format(DiskCache.defaultSizeLimit))).", transform: { try ByteSize(parsing: $0) })
    var diskBytes = ByteSize(bytes: DiskCache.defaultSizeLimit)

    @Option(name: [.customShort("j"), .long], help: "Most transfers in flight.")
    var concurrency = 8

    @Option(help: "Total deadline per transfer, in seconds.")
    var timeout: Double = 30

    @Option(help: "Retries after a transient failure (timeouts, connection failures, 5xx, 408, 429).")
    var retries = 2

    @Option(name: .customLong("negative-ttl"), help: ArgumentHelp("How long an answer that an image is missing (404, 410) is remembered when upstream's headers say nothing: not asked again meanwhile, by this run or the next one using the cache; upstream's Cache-Control or Expires decides otherwise, at most a day; 0 asks every time; a reload (validate) always asks.",
                               valueName: "seconds"))
    var negativeTTL = 60

    @Option(help: "Largest body accepted, e.g. 50MiB (default: 20MiB).", transform: { try ByteSize(parsing: $0) })
    var maxBytes = ByteSize(bytes: 20 * 1024 * 1024)

    @Option(help: "Largest accepted width x height.")
    var maxPixels = ImageInspector.defaultMaxPixels

    func validate() throws {
        if let memoryCount, memoryCount <= 0 { throw ValidationError("--memory-count must be positive, got \(memoryCount)") }
        if let memoryBytes, memoryBytes.bytes <= 0 { throw ValidationError("--memory-bytes must be positive") }
        guard diskBytes.bytes > 0 else { throw ValidationError("--disk-bytes must be positive") }
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be 1...256, got \(concurrency)") }
        guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be more than 0 and at most 3600 seconds") }
        guard (0...10).contains(retries) else { throw ValidationError("--retries must be 0...10, got \(retries)") }
        guard (0...86_400).contains(negativeTTL) else { throw ValidationError("--negative-ttl must be 0...86400 seconds, got \(negativeTTL)") }
        guard maxBytes.bytes > 0 else { throw ValidationError("--max-bytes must be positive") }
        guard maxPixels > 0 else { throw ValidationError("--max-pixels must be positive, got \(maxPixels)") }
    }

    /// The disk cache directory (`--cache-dir`, `$TILECACHE_CACHE_DIR` or `cache`), nil with `--no-disk-cache`.
    var cacheDir: String? { noDiskCache ? nil : cacheDirectory.path }

    /// The pipeline configuration these options describe, over a command's defaults (a service's differ).
    ///
    /// - Throws: `RuntimeError` when the shared store's URL, endpoint or credentials are wrong.
    func configuration(defaults: ImagePipeline.Configuration = ImagePipeline.Configuration()) throws(RuntimeError) -> ImagePipeline.Configuration {
        var configuration = defaults
        configuration.sharedStore = try sharedStore.configuration()
        if let memoryContent { configuration.memoryContent = memoryContent }
        if let memoryCount { configuration.memoryCountLimit = memoryCount }
        if let memoryBytes { configuration.memoryCostLimit = memoryBytes.bytes }
        if let memoryPolicy { configuration.memoryPolicy = memoryPolicy }
        configuration.diskDirectory = cacheDir
        configuration.diskSizeLimit = diskBytes.bytes
        configuration.downloader.maxConcurrentTransfers = concurrency
        configuration.downloader.retryPolicy = RetryPolicy(maxAttempts: retries + 1)
        configuration.negativeLifetime = .seconds(negativeTTL)
        configuration.downloader.transferOptions.totalTimeout = .milliseconds(Int(timeout * 1000))
        configuration.downloader.transferOptions.maxBodyBytes = maxBytes.bytes
        configuration.inspector = ImageInspector(maxPixels: maxPixels)
        return configuration
    }

    /// The pipeline these options describe. Its disk cache must open, unless `--no-disk-cache`: a warm-up that can
    /// store nothing is not a success. Its shared tier, when given, is checked (see `SharedStoreOptions.connect`).
    ///
    /// - Throws: `RuntimeError` naming the directory or the shared store, and the reason.
    func makePipeline(logger: Logger) async throws(RuntimeError) -> ImagePipeline {
        let configuration = try configuration()
        let pipeline: ImagePipeline
        do {
            pipeline = try ImagePipeline(requiringDiskCacheWith: configuration, logger: logger)
        } catch {
            throw Self.unusable(error)
        }
        try await sharedStore.connect(pipeline)
        return pipeline
    }

    /// The error for a cache directory that cannot be used.
    static func unusable(_ error: ImageCoreError) -> RuntimeError {
        RuntimeError("\(error.subject): cannot use it as the disk cache: \(error.message) (--no-disk-cache runs without one)")
    }
}

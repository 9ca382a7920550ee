import ArgumentParser
import Foundation
import ImageCore

/// Cache and network options shared by the commands that fetch.
struct PipelineOptions: ParsableArguments {
    @Option(help: "Disk cache directory (default: $TILECACHE_CACHE_DIR, else cache/).")
    var cacheDir = DiskCache.defaultDirectory

    @Option(help: "Most decoded images kept in memory.")
    var memoryCount = MemoryCache<String, CachedImage>.defaultCountLimit

    @Option(help: "Most decoded pixel bytes kept in memory, e.g. 10MiB.", transform: { try ByteSize(parsing: $0) })
    var memoryBytes = ByteSize(bytes: MemoryCache<String, CachedImage>.defaultCostLimit)

    @Option(help: "Disk cache size limit, e.g. 256MiB.", transform: { try ByteSize(parsing: $0) })
    var diskBytes = ByteSize(bytes: DiskCache.defaultSizeLimit)

    @Option(name: [.customShort("j"), .long], help: "Most transfers in flight.")
    var concurrency = 8

    @Option(help: "Total deadline per transfer, in seconds.")
    var timeout: Double = 30

    @Option(help: "Retries after a transient failure (timeouts, connection failures, 5xx, 408, 429).")
    var retries = 2

    @Option(help: "Largest body accepted, e.g. 20MiB.", transform: { try ByteSize(parsing: $0) })
    var maxBytes = ByteSize(bytes: 20 * 1024 * 1024)

    @Option(help: "Largest accepted width x height.")
    var maxPixels = ImageInspector.defaultMaxPixels

    func validate() throws {
        guard memoryCount > 0 else { throw ValidationError("--memory-count must be positive, got \(memoryCount)") }
        guard memoryBytes.bytes > 0 else { throw ValidationError("--memory-bytes must be positive") }
        guard diskBytes.bytes > 0 else { throw ValidationError("--disk-bytes must be positive") }
        guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be 1...256, got \(concurrency)") }
        guard timeout > 0, timeout <= 3600 else { throw ValidationError("--timeout must be more than 0 and at most 3600 seconds") }
        guard (0...10).contains(retries) else { throw ValidationError("--retries must be 0...10, got \(retries)") }
        guard maxBytes.bytes > 0 else { throw ValidationError("--max-bytes must be positive") }
        guard maxPixels > 0 else { throw ValidationError("--max-pixels must be positive, got \(maxPixels)") }
    }

    /// The pipeline configuration these options describe.
    func configuration(useDisk: Bool = true) -> ImagePipeline.Configuration {
        var configuration = ImagePipeline.Configuration()
        configuration.memoryCountLimit = memoryCount
        configuration.memoryCostLimit = memoryBytes.bytes
        configuration.diskDirectory = useDisk ? cacheDir : nil
        configuration.diskSizeLimit = diskBytes.bytes
        configuration.downloader.maxConcurrentTransfers = concurrency
        configuration.downloader.retryPolicy = RetryPolicy(maxAttempts: retries + 1)
        configuration.downloader.transferOptions.totalTimeout = .milliseconds(Int(timeout * 1000))
        configuration.downloader.transferOptions.maxBodyBytes = maxBytes.bytes
        configuration.engine.maxConnectionsPerHost = max(configuration.engine.maxConnectionsPerHost, concurrency)
        configuration.engine.maxTotalConnections = max(configuration.engine.maxTotalConnections, concurrency)
        configuration.inspector = ImageInspector(maxPixels: maxPixels)
        return configuration
    }
}

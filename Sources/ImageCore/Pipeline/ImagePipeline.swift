import Foundation
import Logging

/// Loads images through memory, then disk, then network, validating everything it downloads.
///
/// Memory holds decoded pixels (exact LRU limits); disk holds the original validated bytes. A stale disk entry
/// with an ETag or Last-Modified is revalidated with a conditional request; a 304 counts as a revalidated hit.
/// Nothing invalid is stored: bytes reach the disk cache only after a full decode succeeds. Thread-safety: call
/// `image(for:)` from any number of tasks; the downloader bounds transfers in flight and coalesces identical ones.
public final class ImagePipeline: Sendable {
    /// The configuration.
    public let configuration: Configuration
    /// Decoded images by URL.
    public let memoryCache: MemoryCache<String, CachedImage>
    /// Validated bytes by URL; nil when running without a disk cache.
    public let diskCache: DiskCache?
    /// The network layer.
    public let downloader: Downloader
    /// Statistics since the pipeline was created.
    public let statistics = PipelineStatistics()
    private let logger: Logger

    /// Builds a pipeline. When the disk cache directory cannot be used, the pipeline runs without it and logs one
    /// warning naming the directory and the reason.
    public init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "tilecache.pipeline")) {
        self.configuration = configuration
        self.logger = logger
        memoryCache = MemoryCache(countLimit: configuration.memoryCountLimit, costLimit: configuration.memoryCostLimit)
        var disk: DiskCache?
        if let directory = configuration.diskDirectory {
            do {
                disk = try DiskCache(directory: directory, sizeLimit: configuration.diskSizeLimit, logger: logger)
            } catch {
                logger.warning("running without the disk cache", metadata: ["directory": "\(directory)", "reason": "\(error.message)"])
            }
        }
        diskCache = disk
        downloader = Downloader(engine: TransferEngine(configuration: configuration.engine), configuration: configuration.downloader)
    }

    /// The decoded image at `url`.
    ///
    /// - Throws: `ImageCoreError` naming the URL: the transfer's reason, `.httpStatus`, or the validator's reason.
    public func image(for url: String) async throws(ImageCoreError) -> ImageResponse {
        let started = ContinuousClock.now
        do {
            let response = try await load(url, started: started)
            statistics.record(response)
            return response
        } catch {
            statistics.record(error, latency: ContinuousClock.now - started)
            throw error
        }
    }

    private func load(_ url: String, started: ContinuousClock.Instant) async throws(ImageCoreError) -> ImageResponse {
        if let cached = memoryCache.value(forKey: url) {
            return ImageResponse(url: url, image: cached.image, header: cached.header, outcome: .memoryHit,
                                 warnings: [], latency: ContinuousClock.now - started, bytesDownloaded: 0)
        }
        if let disk = diskCache, let entry = disk.entry(for: url) {
            if let response = try await fromDisk(entry, disk: disk, started: started) { return response }
        }
        return try await fromNetwork(url, started: started)
    }

    /// A disk hit, a revalidated hit, a refetch of a stale entry, or nil when the entry no longer decodes.
    private func fromDisk(_ entry: DiskCacheEntry, disk: DiskCache, started: ContinuousClock.Instant) async throws(ImageCoreError) -> ImageResponse? {
        let url = entry.metadata.url
        guard entry.metadata.isStale(defaultLifetime: configuration.defaultFreshness) else {
            return decodeFromDisk(entry, disk: disk, outcome: .diskHit, warnings: [], started: started)
        }
        // Without validators this is a plain refetch; with them, a 304 confirms the stored bytes.
        var request = HTTPRequest(url: url, options: configuration.downloader.transferOptions)
        request.ifNoneMatch = entry.metadata.etag
        request.ifModifiedSince = entry.metadata.lastModified
        let response: HTTPResponse
        do {
            response = try await downloader.fetch(request)
        } catch {
            guard configuration.serveStaleOnError, error.isTransient || error.reason == .dns else {
                if error.reason == .httpStatus, error.httpStatus == 404 || error.httpStatus == 410 { disk.remove(url) }
                throw error
            }
            let warning = "served stale from disk: revalidation failed: \(error.reason.rawValue): \(error.message)"
            return decodeFromDisk(entry, disk: disk, outcome: .diskHit, warnings: [warning], started: started)
        }
        if response.status == 304 {
            var metadata = entry.metadata
            metadata.storedAt = Date()
            if let cacheControl = response.cacheControl { metadata.maxAgeSeconds = DiskCacheMetadata.maxAge(fromCacheControl: cacheControl) }
            if let etag = response.etag { metadata.etag = etag }
            do {
                try disk.updateMetadata(metadata, bytes: entry.bytes)
            } catch {
                logger.warning("could not refresh a revalidated cache entry", metadata: ["url": "\(url)", "reason": "\(error.message)"])
            }
            return decodeFromDisk(DiskCacheEntry(metadata: metadata, bytes: entry.bytes), disk: disk,
                                  outcome: .revalidated, warnings: [], started: started)
        }
        return try accept(response, url: url, started: started)
    }

    private func decodeFromDisk(_ entry: DiskCacheEntry, disk: DiskCache, outcome: ImageOutcome, warnings: [String],
                                started: ContinuousClock.Instant) -> ImageResponse? {
        do {
            let validated = try configuration.inspector.validate(entry.bytes, subject: entry.metadata.url,
                                                                  contentType: entry.metadata.contentType)
            memoryCache.set(CachedImage(image: validated.image, header: validated.header), forKey: entry.metadata.url,
                            cost: validated.image.cost)
            return ImageResponse(url: entry.metadata.url, image: validated.image, header: validated.header, outcome: outcome,
                                 warnings: warnings + validated.warnings, latency: ContinuousClock.now - started, bytesDownloaded: 0)
        } catch {
            logger.warning("removing a disk entry that no longer decodes", metadata: ["url": "\(entry.metadata.url)", "reason": "\(error.message)"])
            disk.remove(entry.metadata.url)
            return nil
        }
    }

    private func fromNetwork(_ url: String, started: ContinuousClock.Instant) async throws(ImageCoreError) -> ImageResponse {
        let response = try await downloader.fetch(HTTPRequest(url: url, options: configuration.downloader.transferOptions))
        guard response.status != 304 else {
            throw ImageCoreError(.httpStatus, subject: url, message: "unexpected 304 to an unconditional request", httpStatus: 304)
        }
        return try accept(response, url: url, started: started)
    }

    /// Validates a 2xx body, then stores it on disk and in memory.
    private func accept(_ response: HTTPResponse, url: String, started: ContinuousClock.Instant) throws(ImageCoreError) -> ImageResponse {
        let validated = try configuration.inspector.validate(response.body, subject: url, contentType: response.contentType)
        if let disk = diskCache {
            let metadata = DiskCacheMetadata(url: url, header: validated.header, bytes: response.body,
                                             contentType: response.contentType, etag: response.etag,
                                             lastModified: response.lastModified, cacheControl: response.cacheControl)
            do {
                try disk.store(response.body, metadata: metadata)
            } catch {
                logger.warning("could not store to the disk cache", metadata: ["url": "\(url)", "reason": "\(error.message)"])
            }
        }
        memoryCache.set(CachedImage(image: validated.image, header: validated.header), forKey: url, cost: validated.image.cost)
        return ImageResponse(url: url, image: validated.image, header: validated.header, outcome: .networkFetch,
                             warnings: validated.warnings, latency: ContinuousClock.now - started,
                             bytesDownloaded: response.downloadedBytes)
    }
}

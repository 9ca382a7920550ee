import Foundation
import Logging
import NIOConcurrencyHelpers

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
    /// URLs whose image this process found under another spelling (requested URL to serving URL); the disk cache
    /// remembers them across processes.
    private let aliases = NIOLockedValueBox(Aliases())
    private let logger: Logger

    /// Builds a pipeline. When the disk cache directory cannot be used, the pipeline runs without it and logs one
    /// warning naming the directory and the reason (see `init(requiringDiskCacheWith:logger:)` for callers to whom the
    /// disk cache is the point).
    public convenience init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "tilecache.pipeline")) {
        var disk: DiskCache?
        do {
            disk = try Self.openDiskCache(configuration, logger: logger)
        } catch {
            logger.warning("running without the disk cache", metadata: ["directory": "\(error.subject)", "reason": "\(error.message)"])
        }
        self.init(configuration: configuration, diskCache: disk, logger: logger)
    }

    /// Builds a pipeline whose disk cache must open (when the configuration names a directory): what a warm-up or a
    /// service wants, since running without it would store nothing.
    ///
    /// - Throws: `.io` naming the directory and the reason when it cannot be created, read or written.
    public convenience init(requiringDiskCacheWith configuration: Configuration,
                            logger: Logger = Logger(label: "tilecache.pipeline")) throws(ImageCoreError) {
        self.init(configuration: configuration, diskCache: try Self.openDiskCache(configuration, logger: logger), logger: logger)
    }

    /// The disk cache the configuration names, or nil when it names none.
    private static func openDiskCache(_ configuration: Configuration, logger: Logger) throws(ImageCoreError) -> DiskCache? {
        try configuration.diskDirectory.map { directory throws(ImageCoreError) in
            try DiskCache(directory: directory, sizeLimit: configuration.diskSizeLimit, logger: logger)
        }
    }

    private init(configuration: Configuration, diskCache: DiskCache?, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        memoryCache = MemoryCache(countLimit: configuration.memoryCountLimit, costLimit: configuration.memoryCostLimit)
        self.diskCache = diskCache
        downloader = Downloader(engine: TransferEngine(configuration: configuration.engine), configuration: configuration.downloader)
    }

    /// The decoded image at `url`.
    ///
    /// - Parameter alternatives: other URLs of the same image (another spelling of a name), tried in order when the
    ///   host has no image at `url` (404 or 410). The one that works is remembered, in memory and in the disk cache,
    ///   and tried first next time; the response names it in `servedBy`.
    /// - Throws: `ImageCoreError` naming the URL: the transfer's reason, `.httpStatus`, or the validator's reason.
    public func image(for url: String, alternatives: [String] = []) async throws(ImageCoreError) -> ImageResponse {
        let started = ContinuousClock.now
        do {
            let response = try await load(url, alternatives: alternatives, started: started)
            statistics.record(response)
            return response
        } catch {
            statistics.record(error, latency: ContinuousClock.now - started)
            throw error
        }
    }

    /// The original, validated bytes of the image at `url`, without decoding them when they come from disk.
    ///
    /// Bytes from disk were fully validated when stored and pass their checksum on every read; bytes from the network
    /// are fully validated (and decoded into the memory cache) before they are returned or stored.
    /// - Throws: as `image(for:alternatives:)`.
    public func encodedImage(for url: String, alternatives: [String] = []) async throws(ImageCoreError) -> EncodedImage {
        let started = ContinuousClock.now
        do {
            let loaded = try await resolveBytes(url, alternatives: alternatives)
            let image = EncodedImage(url: url, servedBy: loaded.servedBy, bytes: loaded.bytes, metadata: loaded.metadata,
                                     outcome: loaded.outcome, warnings: loaded.warnings, latency: ContinuousClock.now - started,
                                     bytesDownloaded: loaded.bytesDownloaded)
            statistics.record(outcome: image.outcome, latency: image.latency, bytesDownloaded: image.bytesDownloaded)
            return image
        } catch {
            statistics.record(error, latency: ContinuousClock.now - started)
            throw error
        }
    }

    /// Memory, else bytes from `loadBytes` decoded (unless the network path decoded them already).
    private func load(_ url: String, alternatives: [String], started: ContinuousClock.Instant) async throws(ImageCoreError) -> ImageResponse {
        // Memory holds an image under the URL that served it, so a URL asked for without alternatives is only itself.
        let alias = alternatives.isEmpty ? nil : knownAlias(of: url)
        if let cached = memoryCache.value(forKey: alias ?? url) {
            return ImageResponse(url: url, servedBy: alias, image: cached.image, header: cached.header, outcome: .memoryHit,
                                 warnings: [], latency: ContinuousClock.now - started, bytesDownloaded: 0)
        }
        var loaded = try await resolveBytes(url, alternatives: alternatives)
        if loaded.validated == nil {
            let source = loaded.servedBy ?? url
            do {
                loaded.validated = try configuration.inspector.validate(loaded.bytes, subject: source, contentType: loaded.metadata.contentType)
            } catch {
                // Stored bytes that pass their checksum but no longer decode (a stricter decoder, say): drop and refetch.
                logger.warning("removing a disk entry that no longer decodes", metadata: ["url": "\(source)", "reason": "\(error.message)"])
                diskCache?.remove(source)
                let servedBy = loaded.servedBy
                loaded = try await fromNetwork(source)
                loaded.servedBy = servedBy
            }
        }
        let validated = loaded.validated!
        memoryCache.set(CachedImage(image: validated.image, header: validated.header), forKey: loaded.servedBy ?? url,
                        cost: validated.image.cost)
        return ImageResponse(url: url, servedBy: loaded.servedBy, image: validated.image, header: validated.header, outcome: loaded.outcome,
                             warnings: loaded.warnings + validated.warnings, latency: ContinuousClock.now - started,
                             bytesDownloaded: loaded.bytesDownloaded)
    }

    /// `loadBytes(url)`, or, when the host has no image there (404 or 410), the first of `alternatives` that loads.
    /// A working alternative is remembered and tried first next time; one that stops working is forgotten.
    private func resolveBytes(_ url: String, alternatives: [String]) async throws(ImageCoreError) -> LoadedBytes {
        guard !alternatives.isEmpty else { return try await loadBytes(url) }
        if let alias = knownAlias(of: url) {
            do throws(ImageCoreError) {
                var loaded = try await loadBytes(alias)
                loaded.servedBy = alias
                return loaded
            } catch where error.isNotFound {
                rememberAlias(nil, of: url)
            }
        }
        do throws(ImageCoreError) {
            return try await loadBytes(url)
        } catch where error.isNotFound {
            // Only "not there either" moves on to the next spelling; another failure (a timeout, a 5xx, an invalid
            // image) is the answer, since the image may well be there.
            for alternative in alternatives where alternative != url {
                do throws(ImageCoreError) {
                    var loaded = try await loadBytes(alternative)
                    rememberAlias(alternative, of: url)
                    loaded.servedBy = alternative
                    return loaded
                } catch where error.isNotFound {
                    continue
                }
            }
            let tried = alternatives.map { ($0 as NSString).lastPathComponent }.joined(separator: ", ")
            throw ImageCoreError(error.reason, subject: error.subject, message: "\(error.message) (other spellings tried: \(tried))",
                                 httpStatus: error.httpStatus)
        }
    }

    /// What this process knows of aliases: found ones, and URLs whose disk entry it has read (alias or not), so the
    /// disk cache's file is read once per URL, not on every request.
    struct Aliases {
        var known: [String: String] = [:]
        var lookedUp: Set<String> = []
    }

    /// The URL remembered as serving `url`'s image, by this process or (read once) by the disk cache.
    private func knownAlias(of url: String) -> String? {
        let (alias, lookedUp) = aliases.withLockedValue { ($0.known[url], $0.lookedUp.contains(url)) }
        if alias != nil || lookedUp { return alias }
        let stored = diskCache?.alias(for: url)
        aliases.withLockedValue {
            $0.lookedUp.insert(url)
            if $0.known[url] == nil { $0.known[url] = stored }
        }
        return stored
    }

    private func rememberAlias(_ alias: String?, of url: String) {
        aliases.withLockedValue {
            $0.known[url] = alias
            $0.lookedUp.insert(url)
        }
        do {
            try diskCache?.rememberAlias(alias, for: url)
        } catch {
            logger.warning("could not remember an alias in the disk cache", metadata: ["url": "\(url)", "reason": "\(error.message)"])
        }
        if let alias { logger.debug("image found under another spelling", metadata: ["url": "\(url)", "servedBy": "\(alias)"]) }
    }

    /// Bytes from the disk cache (fresh, or revalidated by a 304), else from the network.
    private func loadBytes(_ url: String) async throws(ImageCoreError) -> LoadedBytes {
        guard let disk = diskCache, let entry = disk.entry(for: url) else { return try await fromNetwork(url) }
        let stored = LoadedBytes(bytes: entry.bytes, metadata: entry.metadata, outcome: .diskHit)
        guard entry.metadata.isStale(defaultLifetime: configuration.defaultFreshness) else { return stored }
        // Without validators this is a plain refetch; with them, a 304 confirms the stored bytes.
        var request = HTTPRequest(url: url, options: configuration.downloader.transferOptions)
        request.ifNoneMatch = entry.metadata.etag
        request.ifModifiedSince = entry.metadata.lastModified
        let response: HTTPResponse
        do {
            response = try await downloader.fetch(request)
        } catch {
            guard configuration.serveStaleOnError, error.isTransient || error.reason == .dns else {
                if error.isNotFound { disk.remove(url) }
                throw error
            }
            var served = stored
            served.warnings = ["served stale from disk: revalidation failed: \(error.reason.rawValue): \(error.message)"]
            return served
        }
        guard response.status == 304 else { return try accept(response, url: url) }
        var metadata = entry.metadata
        metadata.storedAt = Date()
        if let cacheControl = response.cacheControl { metadata.maxAgeSeconds = DiskCacheMetadata.maxAge(fromCacheControl: cacheControl) }
        if let etag = response.etag { metadata.etag = etag }
        do {
            try disk.updateMetadata(metadata, bytes: entry.bytes)
        } catch {
            logger.warning("could not refresh a revalidated cache entry", metadata: ["url": "\(url)", "reason": "\(error.message)"])
        }
        return LoadedBytes(bytes: entry.bytes, metadata: metadata, outcome: .revalidated)
    }

    private func fromNetwork(_ url: String) async throws(ImageCoreError) -> LoadedBytes {
        let response = try await downloader.fetch(HTTPRequest(url: url, options: configuration.downloader.transferOptions))
        guard response.status != 304 else {
            throw ImageCoreError(.httpStatus, subject: url, message: "unexpected 304 to an unconditional request", httpStatus: 304)
        }
        return try accept(response, url: url)
    }

    /// Validates a 2xx body (full decode), then stores it on disk and its pixels in memory.
    private func accept(_ response: HTTPResponse, url: String) throws(ImageCoreError) -> LoadedBytes {
        let validated = try configuration.inspector.validate(response.body, subject: url, contentType: response.contentType)
        let metadata = DiskCacheMetadata(url: url, header: validated.header, bytes: response.body,
                                         contentType: response.contentType, etag: response.etag,
                                         lastModified: response.lastModified, cacheControl: response.cacheControl)
        if let disk = diskCache {
            do {
                try disk.store(response.body, metadata: metadata)
            } catch {
                logger.warning("could not store to the disk cache", metadata: ["url": "\(url)", "reason": "\(error.message)"])
            }
        }
        memoryCache.set(CachedImage(image: validated.image, header: validated.header), forKey: url, cost: validated.image.cost)
        return LoadedBytes(bytes: response.body, metadata: metadata, outcome: .networkFetch, validated: validated,
                           bytesDownloaded: response.downloadedBytes)
    }
}

/// What `loadBytes` found: the bytes, their metadata, how they were had, and the decoded image when already decoded.
struct LoadedBytes {
    var bytes: [UInt8]
    var metadata: DiskCacheMetadata
    var outcome: ImageOutcome
    var validated: ValidatedImage?
    var warnings: [String] = []
    /// The other URL that served the image, when the one asked for has none.
    var servedBy: String?
    var bytesDownloaded = 0
}

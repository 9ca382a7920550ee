import Foundation
public import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Loads images through memory, then disk, then network, validating everything it downloads, and makes the variants
/// a request's processing asks for.
///
/// `image(for:)` is the one entry point. Memory holds pixels or encoded bytes (`Configuration.memoryContent`, exact
/// LRU limits) under a key derived from the request; disk holds the original validated bytes. A stale disk entry with
/// an ETag or Last-Modified is revalidated with a conditional request; a 304 counts as a revalidated hit. Nothing
/// invalid is stored: bytes reach the disk cache only after a full decode succeeds. Concurrent requests with one
/// coalescing key share one load (one download, one decode, one store, one resize), and a variant shares its source's
/// load with requests for the original. Loads past the memory tier are bounded (`maxPendingLoads`), each request has
/// one deadline (`requestTimeout`) its transfers fit inside, and the downloader bounds transfers in flight.
/// Thread-safety: call `image(for:)` from any number of tasks.
public final class ImagePipeline: Sendable {
    /// The configuration.
    public let configuration: Configuration
    /// The memory tier: pixels or encoded bytes (see `MemoryContent`), keyed by `ImageKey.cacheKey`.
    public let memoryCache: MemoryCache<String, CachedImage>
    /// Validated bytes by URL; nil when running without a disk cache.
    public let diskCache: DiskCache?
    /// The network layer.
    public let downloader: Downloader
    /// The shared tier of a fleet (an S3 bucket, over the downloader's engine), when configured.
    public let sharedTier: SharedTier?
    /// Statistics since the pipeline was created: every request, by outcome and failure reason.
    public let statistics = PipelineStatistics()
    /// The one coalescer: loads in flight by request.
    private let loads = TaskCoalescer<ImageRequest.CoalescingKey, Loaded>()
    /// The bound on variants being made (`maxConcurrentProcessing`, `maxQueuedProcessing`), when a queue bound is set.
    private let processing: WorkLimiter?
    /// Requests past the memory tier now (for `maxPendingLoads`).
    private let pending = NIOLockedValueBox(0)
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
        memoryCache = MemoryCache(countLimit: configuration.memoryCountLimit, costLimit: configuration.memoryCostLimit,
                                  policy: configuration.memoryPolicy)
        self.diskCache = diskCache
        let downloader = Downloader(configuration: configuration.downloader)
        self.downloader = downloader
        sharedTier = configuration.sharedStore.map { SharedTier(configuration: $0, engine: downloader.engine, logger: logger) }
        processing = configuration.maxQueuedProcessing.map {
            WorkLimiter(concurrency: max(1, configuration.maxConcurrentProcessing), queue: max(0, $0))
        }
    }

    // MARK: - The entry point

    /// The image `request` asks for: from memory, else from the one load of its key (disk, else network, then the
    /// processing), recorded in `statistics`.
    ///
    /// - Throws: `ImageCoreError` naming the URL: the transfer's reason, `.httpStatus`, the validator's reason,
    ///   `.processing` when a valid image cannot be processed, `.overloaded` past `maxPendingLoads`, `.deadlineExceeded`
    ///   past `requestTimeout`.
    public func image(for request: ImageRequest) async throws(ImageCoreError) -> ImageResponse {
        let started = ContinuousClock.now
        do {
            let response = try await respond(to: request, started: started)
            statistics.record(response)
            return response
        } catch {
            statistics.record(error.error, latency: ContinuousClock.now - started, shared: error.shared)
            throw error.error
        }
    }

    /// `request`'s answer if the memory tier has it now, without waiting: nil when answering would take more than a
    /// lookup (not in memory, a reload, pixels asked of an entry that holds bytes, or alternatives whose alias this
    /// process has not looked up yet), and then `image(for:)` does the rest. Recorded in `statistics` as a memory hit,
    /// as `image(for:)` records it, unless `recording` is false (a caller that may still hand the request to
    /// `image(for:)` records it itself once it answers). Safe on an event loop: it takes two locks and never blocks on I/O.
    public func cachedImage(for request: ImageRequest, recording: Bool = true) -> ImageResponse? {
        let started = ContinuousClock.now
        guard !request.options.contains(.reloadIgnoringCachedData) else { return nil }
        var servedBy = request.url
        if !request.alternatives.isEmpty {
            guard let known = aliasInMemory(of: request.url) else { return nil }
            servedBy = known ?? request.url
        }
        guard let hit = memoryHit(request, servedBy: servedBy), hit.bytes != nil,
              hit.image != nil || !request.options.contains(.returnPixels) else { return nil }
        let response = response(hit, to: request, shared: false, started: started)
        if recording { statistics.record(response) }
        return response
    }

    /// The original image at `url` (a shorthand for `image(for: ImageRequest(url: url, alternatives: alternatives))`).
    public func image(for url: String, alternatives: [String] = []) async throws(ImageCoreError) -> ImageResponse {
        try await image(for: ImageRequest(url: url, alternatives: alternatives))
    }

    /// A failure, and whether it was another request's load that failed.
    private struct Failure: Error {
        var error: ImageCoreError
        var shared = false
    }

    private func respond(to request: ImageRequest, started: ContinuousClock.Instant) async throws(Failure) -> ImageResponse {
        if var hit = await fromMemory(request) {
            if hit.image == nil, request.options.contains(.returnPixels), let bytes = hit.bytes {
                let subject = hit.servedBy ?? request.url
                do {
                    hit.image = try await BlockingWork.run { [inspector = configuration.inspector] () throws(ImageCoreError) in
                        try inspector.validate(Array(bytes.readableBytesView), subject: subject).image
                    }
                } catch {
                    throw Failure(error: error)
                }
            }
            return response(hit, to: request, shared: false, started: started)
        }
        if let limit = configuration.maxPendingLoads {
            let admitted = pending.withLockedValue { count -> Bool in
                guard count < limit else { return false }
                count += 1
                return true
            }
            guard admitted else {
                throw Failure(error: ImageCoreError(.overloaded, subject: request.url,
                                                    message: "\(limit) images are being loaded already; retry shortly"))
            }
        }
        defer { if configuration.maxPendingLoads != nil { pending.withLockedValue { $0 -= 1 } } }
        let deadline = configuration.requestTimeout.map { started + $0 }
        let (loaded, joined) = try await shared(request, deadline: deadline)
        return response(loaded, to: request, shared: joined, started: started)
    }

    /// `request`'s entry in the memory tier as a load's result (a memory hit), or nil; nil at once for a reload.
    private func fromMemory(_ request: ImageRequest) async -> Loaded? {
        guard !request.options.contains(.reloadIgnoringCachedData) else { return nil }
        return memoryHit(request, servedBy: await servingURL(of: request))
    }

    /// The memory tier's entry for `request` served by `servedBy`, as a load's result.
    private func memoryHit(_ request: ImageRequest, servedBy: String) -> Loaded? {
        guard let cached = memoryCache.value(forKey: request.key(servedBy: servedBy).cacheKey) else { return nil }
        return Loaded(servedBy: servedBy == request.url ? nil : servedBy, bytes: cached.bytes, header: cached.header,
                      contentType: cached.contentType, validators: cached.validators, image: cached.image,
                      outcome: .memoryHit, warnings: [], bytesDownloaded: 0, freshUntil: cached.freshUntil)
    }

    /// The response to `request` from what answered it; pixels only when the tier holds pixels or the request asked.
    private func response(_ loaded: Loaded, to request: ImageRequest, shared: Bool, started: ContinuousClock.Instant) -> ImageResponse {
        let wantsPixels = request.options.contains(.returnPixels) || configuration.memoryContent == .decoded
        return ImageResponse(request: request, servedBy: loaded.servedBy, bytes: loaded.bytes, header: loaded.header,
                             contentType: loaded.contentType, originContentType: loaded.originContentType, validators: loaded.validators,
                             image: wantsPixels ? loaded.image : nil, outcome: loaded.outcome, processed: loaded.processed,
                             shared: shared, httpStatus: loaded.httpStatus, warnings: loaded.warnings,
                             latency: ContinuousClock.now - started, transferTimings: loaded.timings,
                             bytesDownloaded: shared ? 0 : loaded.bytesDownloaded)
    }

    /// The load of `request`'s key, started by this request or joined; waited for until `deadline` at most. Past the
    /// deadline the request fails at once and the load goes on (for other requests, and to fill the caches); a
    /// cancelled request stops the load when no other request waits for it (see `TaskCoalescer`).
    private func shared(_ request: ImageRequest, deadline: ContinuousClock.Instant?) async throws(Failure) -> (Loaded, Bool) {
        // Whether this request joined another's load, known once it waits: a failure it met is then that load's.
        let joined = NIOLockedValueBox(false)
        let expired = configuration.requestTimeout.map {
            ImageCoreError(.deadlineExceeded, subject: request.url, message: "the image was not ready within \($0)")
        }
        let expiry: @Sendable () -> any Error = { expired.map { $0 as any Error } ?? CancellationError() }
        let registered: @Sendable (Bool) -> Void = { value in joined.withLockedValue { $0 = value } }
        let operation: @Sendable () async throws -> Loaded = { [self] in try await load(request, deadline: deadline) }
        do {
            let (loaded, sharedLoad) = try await loads.run(request.coalescingKey, until: deadline, expired: expiry,
                                                           registered: registered, operation: operation)
            return (loaded, sharedLoad)
        } catch var error as ImageCoreError {
            // A transfer cut to fit the deadline times out with it: that is the deadline's failure.
            if error.reason == .timeout, let deadline, let expired, ContinuousClock.now >= deadline { error = expired }
            throw Failure(error: error, shared: joined.withLockedValue { $0 })
        } catch {
            throw Failure(error: ImageCoreError(.cancelled, subject: request.url, message: "the request was cancelled"),
                          shared: joined.withLockedValue { $0 })
        }
    }

    // MARK: - Loads

    /// What one load produced, shared by every request that waited for it.
    struct Loaded: Sendable {
        var servedBy: String?
        /// The encoded bytes; nil only for a memory hit when the tier holds pixels.
        var bytes: ByteBuffer?
        var header: ImageHeader
        var contentType: String
        var originContentType: String?
        var validators: ImageValidators
        /// Pixels, when the load had them at hand (downloaded and validated, or decoded from disk).
        var image: DecodedImage?
        var outcome: ImageOutcome
        var processed = false
        var warnings: [String]
        var httpStatus: Int?
        var timings: TransferTimings?
        var bytesDownloaded: Int
        /// When the source stops being fresh, when known (see `CachedImage.freshUntil`).
        var freshUntil: Date?
    }

    /// The source (disk, else network), then the processing when the request asks for a variant.
    private func load(_ request: ImageRequest, deadline: ContinuousClock.Instant?) async throws(ImageCoreError) -> Loaded {
        guard !request.processing.isNone else { return try await loadSource(request, deadline: deadline) }
        if let stored = await sharedVariant(request) {
            remember(stored, for: request)
            return stored
        }
        let source = try await source(for: request, deadline: deadline)
        let servedBy = source.servedBy ?? request.url
        if let stored = await diskVariant(request, of: source) {
            remember(stored, for: request)
            return stored
        }
        let variant: ProcessedImage
        do throws(ImageCoreError) {
            variant = try await limitProcessing(servedBy) { () async throws(ImageCoreError) -> ProcessedImage in try await BlockingWork.run { [inspector = configuration.inspector, processing = request.processing] () throws(ImageCoreError) in
                // The bytes decoded at the DCT scale that leaves the reduce a factor of three (ImageProcessor.shrinkOnLoad),
                // however the source was loaded, so the variant is the same bytes cold or warm; the pixels the load had
                // (a download is decoded to validate it) only for a PNG without a profile to convert, whose decode is
                // the same either way, or a source without bytes.
                let bytes = source.bytes.map { Array($0.readableBytesView) }
                if let image = source.image, !(bytes.map(ImageProcessor.makesVariantFromOwnDecode) ?? false) {
                    // The orientation from the bytes when they are at hand: a disk entry written before orientation was
                    // recorded does not have it.
                    var header = source.header
                    if header.format == .jpeg, let bytes, let read = try? inspector.inspectHeader(bytes, subject: servedBy) { header = read }
                    return try ImageProcessor.process(ImageProcessor.Source(image: image, header: header), processing, subject: servedBy)
                }
                // Without pixels (or with pixels that are not sRGB) a source has its bytes (a load, or the encoded memory
                // tier).
                return try ImageProcessor.process(bytes ?? [], processing, subject: servedBy, inspector: inspector)
            } }
        } catch where error.reason == .outputTooLarge || error.reason == .overloaded || error.reason == .cancelled {
            throw error
        } catch {
            logger.error("processing failed", metadata: ["url": "\(servedBy)", "processing": "\(request.processing)", "message": "\(error.message)"])
            throw ImageCoreError(.processing, subject: servedBy, message: "the image could not be processed: \(error.message)")
        }
        var loaded = source
        loaded.bytes = ByteBuffer(bytes: variant.bytes)
        loaded.header = ImageHeader(format: variant.format, width: variant.width, height: variant.height, byteCount: variant.bytes.count)
        loaded.contentType = variant.format.mimeType
        loaded.validators = source.validators.processed(request.processing)
        loaded.image = variant.image
        loaded.processed = true
        remember(loaded, for: request)
        guard !request.options.contains(.disableDiskCacheWrites), diskCache != nil || sharedTier != nil else { return loaded }
        // Result storage: the variant under its source's key plus the processing, fresh as long as the source; on the
        // local disk (read back only while its ETag matches the source's) and in the shared tier.
        let now = Date()
        var metadata = DiskCacheMetadata(url: request.key(servedBy: servedBy).cacheKey, header: loaded.header, bytes: variant.bytes,
                                         contentType: nil, etag: loaded.validators.etag, lastModified: loaded.validators.lastModified,
                                         cacheControl: nil, storedAt: now)
        metadata.maxAgeSeconds = loaded.freshUntil.map { max(0, Int($0.timeIntervalSince(now))) }
        if let disk = diskCache {
            do {
                _ = try await BlockingWork.run { [metadata] () throws(ImageCoreError) in try disk.store(variant.bytes, metadata: metadata) }
            } catch {
                logger.warning("a variant could not be stored on disk", metadata: ["url": "\(metadata.url)", "reason": "\(error.message)"])
            }
        }
        sharedTier?.store(named: request.key(servedBy: servedBy).sharedObjectName, bytes: variant.bytes, metadata: metadata)
        return loaded
    }

    /// The variant `request` asks for as this machine made it before, from the disk cache: only while its ETag is the
    /// one the current source gives it (a source that changed upstream makes its old variants unreachable), and
    /// decoded only when pixels are wanted.
    private func diskVariant(_ request: ImageRequest, of source: Loaded) async -> Loaded? {
        guard let disk = diskCache, !request.options.contains(.reloadIgnoringCachedData) else { return nil }
        let key = request.key(servedBy: source.servedBy ?? request.url).cacheKey
        let validators = source.validators.processed(request.processing)
        guard let entry = await BlockingWork.run({ disk.entry(for: key) }), entry.metadata.etag == validators.etag else { return nil }
        var image: DecodedImage?
        if wantsPixels(request) {
            guard entry.metadata.format.isDecodable,
                  let decoded = try? await BlockingWork.run({ [inspector = configuration.inspector] () throws(ImageCoreError) in
                      try inspector.validate(entry.bytes, subject: key).image
                  }) else { return nil }
            image = decoded
        }
        return Loaded(servedBy: source.servedBy, bytes: ByteBuffer(bytes: entry.bytes), header: entry.metadata.header,
                      contentType: entry.metadata.format.mimeType, validators: validators, image: image, outcome: .diskHit,
                      warnings: [], bytesDownloaded: 0, freshUntil: source.freshUntil)
    }

    /// `work` inside the processing bound: `.overloaded` at once when as many variants as allowed are being made and
    /// waiting, `.cancelled` when the request goes away while it waits.
    private func limitProcessing<T: Sendable>(_ subject: String, _ work: () async throws(ImageCoreError) -> T) async throws(ImageCoreError) -> T {
        guard let processing else { return try await work() }
        let result: T?
        do {
            result = try await processing.run { try await work() }
        } catch let error as ImageCoreError {
            throw error
        } catch {
            throw ImageCoreError(.cancelled, subject: subject, message: "the request was cancelled while its variant waited to be made")
        }
        guard let result else {
            throw ImageCoreError(.overloaded, subject: subject, message: """
                \(processing.concurrency) variants are being made and \(processing.queue) wait already; retry shortly
                """)
        }
        return result
    }

    /// The variant `request` asks for as another instance made it, from the shared tier: fresh, its SHA-256 verified,
    /// decoded only when pixels are wanted. Nil on a miss, a stale or damaged object, or without a tier.
    private func sharedVariant(_ request: ImageRequest) async -> Loaded? {
        guard let tier = sharedTier, !request.options.contains(.reloadIgnoringCachedData) else { return nil }
        // Variants are stored under the URL that served the source. An instance that has not learnt the alias yet (an
        // empty disk) looks under each spelling, so `cesium.jpg?w=64` finds what another instance made from caesium.jpg.
        var candidates = [await servingURL(of: request)]
        if candidates[0] == request.url { candidates += request.alternatives }
        var found: (url: String, entry: DiskCacheEntry)?
        for candidate in candidates {
            let key = request.key(servedBy: candidate)
            if let (entry, _) = await tier.entry(named: key.sharedObjectName, url: key.cacheKey) {
                found = (candidate, entry)
                break
            }
        }
        guard let (servedBy, entry) = found, !entry.metadata.isStale(defaultLifetime: configuration.defaultFreshness),
              let etag = entry.metadata.etag, let lastModified = entry.metadata.lastModified else { return nil }
        let metadata = entry.metadata
        var image: DecodedImage?
        if wantsPixels(request) {
            do {
                image = try await BlockingWork.run { [inspector = configuration.inspector] () throws(ImageCoreError) in
                    try inspector.validate(entry.bytes, subject: servedBy).image
                }
            } catch {
                logger.warning("a shared variant does not decode: making it again", metadata: ["url": "\(metadata.url)", "reason": "\(error.message)"])
                return nil
            }
        }
        return Loaded(servedBy: servedBy == request.url ? nil : servedBy, bytes: ByteBuffer(bytes: entry.bytes),
                      header: metadata.header,
                      contentType: metadata.format.mimeType, validators: ImageValidators(etag: etag, lastModified: lastModified),
                      image: image, outcome: .sharedHit, warnings: [], bytesDownloaded: 0,
                      freshUntil: metadata.storedAt.addingTimeInterval(Double(metadata.maxAgeSeconds ?? Int(configuration.defaultFreshness.components.seconds))))
    }

    /// The source of a variant: from memory, else from its own load, which requests for the original (and for other
    /// variants) share.
    private func source(for request: ImageRequest, deadline: ContinuousClock.Instant?) async throws(ImageCoreError) -> Loaded {
        let source = request.original
        if let hit = await fromMemory(source) { return hit }
        do {
            let (loaded, joined) = try await loads.run(source.coalescingKey) { [self] in try await loadSource(source, deadline: deadline) }
            guard joined else { return loaded }
            var shared = loaded
            shared.bytesDownloaded = 0  // counted by the request that led the source's load
            return shared
        } catch let error as ImageCoreError {
            throw error
        } catch {
            throw ImageCoreError(.cancelled, subject: request.url, message: "the request was cancelled")
        }
    }

    /// The original image: bytes from disk or network (other spellings tried), decoded when pixels are wanted,
    /// stored in memory.
    private func loadSource(_ request: ImageRequest, deadline: ContinuousClock.Instant?) async throws(ImageCoreError) -> Loaded {
        var loaded = try await resolveBytes(request, deadline: deadline)
        if loaded.validated == nil, wantsPixels(request) {
            let source = loaded.servedBy ?? request.url
            do {
                let (bytes, contentType) = (loaded.bytes, loaded.metadata.contentType)
                loaded.validated = try await BlockingWork.run { [inspector = configuration.inspector] () throws(ImageCoreError) in
                    try inspector.validate(bytes, subject: source, contentType: contentType)
                }
            } catch {
                // Stored bytes that pass their checksum but no longer decode (a stricter decoder, say): drop and refetch.
                logger.warning("removing a disk entry that no longer decodes", metadata: ["url": "\(source)", "reason": "\(error.message)"])
                if let disk = diskCache, !request.options.contains(.disableDiskCacheWrites) { await BlockingWork.run { disk.remove(source) } }
                let servedBy = loaded.servedBy
                loaded = try await fromNetwork(source, request: request, deadline: deadline)
                loaded.servedBy = servedBy
            }
        }
        let metadata = loaded.metadata
        let result = Loaded(servedBy: loaded.servedBy, bytes: ByteBuffer(bytes: loaded.bytes),
                            header: metadata.header,
                            contentType: metadata.format.mimeType, originContentType: metadata.contentType,
                            validators: ImageValidators(source: metadata),
                            image: loaded.validated?.image, outcome: loaded.outcome,
                            warnings: loaded.warnings + (loaded.validated?.warnings ?? []), httpStatus: loaded.httpStatus,
                            timings: loaded.timings, bytesDownloaded: loaded.bytesDownloaded,
                            freshUntil: metadata.storedAt.addingTimeInterval(
                                Double(metadata.maxAgeSeconds ?? Int(configuration.defaultFreshness.components.seconds))))
        remember(result, for: request)
        return result
    }

    /// Whether a load for `request` decodes the image: the request asks for pixels, or the memory tier keeps them.
    private func wantsPixels(_ request: ImageRequest) -> Bool {
        request.options.contains(.returnPixels)
            || (configuration.memoryContent == .decoded && !request.options.contains(.disableMemoryCacheWrites))
    }

    /// Stores a load's result in the memory tier, as its content says, unless the request says not to.
    private func remember(_ loaded: Loaded, for request: ImageRequest) {
        guard !request.options.contains(.disableMemoryCacheWrites) else { return }
        let entry: CachedImage
        switch configuration.memoryContent {
        case .decoded:
            guard let image = loaded.image else { return }
            entry = CachedImage(header: loaded.header, contentType: loaded.contentType, validators: loaded.validators, image: image,
                                freshUntil: loaded.freshUntil)
        case .encoded:
            entry = CachedImage(header: loaded.header, contentType: loaded.contentType, validators: loaded.validators, bytes: loaded.bytes,
                                freshUntil: loaded.freshUntil)
        }
        memoryCache.set(entry, forKey: request.key(servedBy: loaded.servedBy ?? request.url).cacheKey, cost: entry.cost)
    }

    // MARK: - Bytes: aliases, disk, network

    /// The URL that serves `request`'s image as far as this process knows: a remembered alias, else the URL.
    private func servingURL(of request: ImageRequest) async -> String {
        guard !request.alternatives.isEmpty else { return request.url }
        return await knownAlias(of: request.url) ?? request.url
    }

    /// `loadBytes(url)`, or, when the host has no image there (404 or 410), the first of the alternatives that loads.
    /// A working alternative is remembered and tried first next time; one that stops working is forgotten.
    private func resolveBytes(_ request: ImageRequest, deadline: ContinuousClock.Instant?) async throws(ImageCoreError) -> LoadedBytes {
        let url = request.url, alternatives = request.alternatives
        guard !alternatives.isEmpty else { return try await loadBytes(url, request: request, deadline: deadline) }
        let persist = !request.options.contains(.disableDiskCacheWrites)
        if !request.options.contains(.reloadIgnoringCachedData), let alias = await knownAlias(of: url) {
            do throws(ImageCoreError) {
                var loaded = try await loadBytes(alias, request: request, deadline: deadline)
                loaded.servedBy = alias
                return loaded
            } catch where error.isNotFound {
                await rememberAlias(nil, of: url, persist: persist)
            }
        }
        do throws(ImageCoreError) {
            return try await loadBytes(url, request: request, deadline: deadline)
        } catch where error.isNotFound {
            // Only "not there either" moves on to the next spelling; another failure (a timeout, a 5xx, an invalid
            // image) is the answer, since the image may well be there.
            for alternative in alternatives where alternative != url {
                do throws(ImageCoreError) {
                    var loaded = try await loadBytes(alternative, request: request, deadline: deadline)
                    await rememberAlias(alternative, of: url, persist: persist)
                    loaded.servedBy = alternative
                    return loaded
                } catch where error.isNotFound {
                    continue
                }
            }
            let tried = alternatives.map { ($0 as NSString).lastPathComponent }.joined(separator: ", ")
            var exhausted = error
            exhausted.message += " (other spellings tried: \(tried))"
            throw exhausted
        }
    }

    /// What this process knows of aliases: found ones, and URLs whose disk entry it has read (alias or not), so the
    /// disk cache's file is read once per URL, not on every request.
    struct Aliases {
        var known: [String: String] = [:]
        var lookedUp: Set<String> = []
    }

    /// The URL remembered as serving `url`'s image, by this process or (read once) by the disk cache.
    private func knownAlias(of url: String) async -> String? {
        if let known = aliasInMemory(of: url) { return known }
        var stored: String?
        if let disk = diskCache { stored = await BlockingWork.run { disk.alias(for: url) } }
        aliases.withLockedValue {
            $0.lookedUp.insert(url)
            if $0.known[url] == nil { $0.known[url] = stored }
        }
        return stored
    }

    /// What this process knows of `url`'s alias without reading the disk: `.some(alias)` (nil: none) once it is known,
    /// nil when the disk cache's entry has not been read yet.
    private func aliasInMemory(of url: String) -> String?? {
        aliases.withLockedValue { aliases in
            if let alias = aliases.known[url] { return .some(alias) }
            return aliases.lookedUp.contains(url) ? .some(nil) : nil
        }
    }

    /// Remembers (or, with nil, forgets) an alias in this process, and in the disk cache when `persist`.
    private func rememberAlias(_ alias: String?, of url: String, persist: Bool) async {
        aliases.withLockedValue {
            $0.known[url] = alias
            $0.lookedUp.insert(url)
        }
        if persist, let disk = diskCache {
            do {
                try await BlockingWork.run { () throws(ImageCoreError) in try disk.rememberAlias(alias, for: url) }
            } catch {
                logger.warning("could not remember an alias in the disk cache", metadata: ["url": "\(url)", "reason": "\(error.message)"])
            }
        }
        if let alias { logger.debug("image found under another spelling", metadata: ["url": "\(url)", "servedBy": "\(alias)"]) }
    }

    /// Bytes from the disk cache, else from the shared tier (fresh, or revalidated by a 304), else from the network.
    private func loadBytes(_ url: String, request: ImageRequest, deadline: ContinuousClock.Instant?) async throws(ImageCoreError) -> LoadedBytes {
        let key = ImageKey(url: url).cacheKey
        guard !request.options.contains(.reloadIgnoringCachedData) else {
            return try await fromNetwork(url, request: request, deadline: deadline)
        }
        var found: (entry: DiskCacheEntry, loaded: LoadedBytes)?
        if let disk = diskCache {
            // One trip to the blocking pool reads the entry and, when pixels are wanted and the entry is fresh, decodes
            // it too (a decode that fails is left to `loadSource`, which removes the entry and fetches again).
            let decode = wantsPixels(request)
            let (entry, decoded) = await BlockingWork.run { [inspector = configuration.inspector, freshness = configuration.defaultFreshness] in
                guard let entry = disk.entry(for: key) else { return (nil as DiskCacheEntry?, nil as ValidatedImage?) }
                guard decode, !entry.metadata.isStale(defaultLifetime: freshness) else { return (entry, nil) }
                return (entry, try? inspector.validate(entry.bytes, subject: url, contentType: entry.metadata.contentType))
            }
            if let entry { found = (entry, LoadedBytes(bytes: entry.bytes, metadata: entry.metadata, outcome: .diskHit, validated: decoded)) }
        }
        if found == nil { found = await fromSharedTier(url, request: request) }
        guard let (entry, stored) = found else { return try await fromNetwork(url, request: request, deadline: deadline) }
        guard entry.metadata.isStale(defaultLifetime: configuration.defaultFreshness),
              !request.options.contains(.returnCacheDataDontLoad) else { return stored }
        // Without validators this is a plain refetch; with them, a 304 confirms the stored bytes.
        var conditional = TransferRequest(url: url, options: configuration.downloader.transferOptions)
        conditional.ifNoneMatch = entry.metadata.etag
        conditional.ifModifiedSince = entry.metadata.lastModified
        let response: TransferResponse
        do {
            response = try await downloader.fetch(conditional, deadline: deadline)
        } catch {
            guard configuration.serveStaleOnError, error.isTransient || error.reason == .dns else {
                if error.isNotFound, let disk = diskCache { await BlockingWork.run { disk.remove(key) } }
                throw error
            }
            var served = stored
            served.warnings = ["served stale from \(stored.outcome == .sharedHit ? "the shared store" : "disk"): revalidation failed: \(error.reason.rawValue): \(error.message)"]
            return served
        }
        guard response.status == 304 else { return try await accept(response, url: url, request: request) }
        var metadata = entry.metadata
        metadata.storedAt = Date()
        if let cacheControl = response.cacheControl { metadata.maxAgeSeconds = DiskCacheMetadata.maxAge(fromCacheControl: cacheControl) }
        if let etag = response.etag { metadata.etag = etag }
        if !request.options.contains(.disableDiskCacheWrites) {
            if let disk = diskCache {
                do {
                    try await BlockingWork.run { [metadata] () throws(ImageCoreError) in try disk.updateMetadata(metadata, bytes: entry.bytes) }
                } catch {
                    logger.warning("could not refresh a revalidated cache entry", metadata: ["url": "\(url)", "reason": "\(error.message)"])
                }
            }
            // The fleet sees the entry fresh again too.
            sharedTier?.store(named: ImageKey(url: url).sharedObjectName, bytes: entry.bytes, metadata: metadata)
        }
        return LoadedBytes(bytes: entry.bytes, metadata: metadata, outcome: .revalidated, httpStatus: 304, timings: response.timings,
                           bytesDownloaded: response.downloadedBytes)
    }

    /// The image at `url` from the shared tier: its SHA-256 verified by the tier, then validated by a full decode and
    /// written to the local disk (unless the request says not to). Nil on a miss, a failure or an object that does
    /// not decode (then the network fetch that follows replaces it).
    private func fromSharedTier(_ url: String, request: ImageRequest) async -> (entry: DiskCacheEntry, loaded: LoadedBytes)? {
        guard let tier = sharedTier, let (entry, _) = await tier.entry(named: ImageKey(url: url).sharedObjectName, url: url) else { return nil }
        let persist = !request.options.contains(.disableDiskCacheWrites)
        let validated: ValidatedImage
        var warnings: [String] = []
        do throws(ImageCoreError) {
            (validated, warnings) = try await BlockingWork.run { [inspector = configuration.inspector, disk = diskCache, logger] () throws(ImageCoreError) -> (ValidatedImage, [String]) in
                let image = try inspector.validate(entry.bytes, subject: url, contentType: entry.metadata.contentType)
                guard persist, let disk else { return (image, []) }
                do throws(ImageCoreError) {
                    try disk.store(entry.bytes, metadata: entry.metadata)
                    return (image, [])
                } catch {
                    logger.warning("could not store to the disk cache", metadata: ["url": "\(url)", "reason": "\(error.message)"])
                    return (image, ["not stored: \(error.message)"])
                }
            }
        } catch {
            logger.warning("a shared object does not decode: fetching the image again", metadata: ["url": "\(url)", "reason": "\(error.message)"])
            return nil
        }
        return (entry, LoadedBytes(bytes: entry.bytes, metadata: entry.metadata, outcome: .sharedHit, validated: validated, warnings: warnings))
    }

    private func fromNetwork(_ url: String, request: ImageRequest, deadline: ContinuousClock.Instant?) async throws(ImageCoreError) -> LoadedBytes {
        guard !request.options.contains(.returnCacheDataDontLoad) else {
            throw ImageCoreError(.notCached, subject: url, message: "not in the caches, and the request allows no download")
        }
        let response = try await downloader.fetch(TransferRequest(url: url, options: configuration.downloader.transferOptions), deadline: deadline)
        guard response.status != 304 else {
            throw ImageCoreError(.httpStatus, subject: url, message: "unexpected 304 to an unconditional request", httpStatus: 304)
        }
        return try await accept(response, url: url, request: request)
    }

    /// Validates a 2xx body (a full decode; `check` when the request keeps the image nowhere), then stores it on disk:
    /// on the blocking pool.
    ///
    /// - Throws: the validator's error, carrying what was received (status, type, size, format, header if readable).
    private func accept(_ response: TransferResponse, url: String, request: ImageRequest) async throws(ImageCoreError) -> LoadedBytes {
        try await BlockingWork.run { [self] () throws(ImageCoreError) in try validateAndStore(response, url: url, request: request) }
    }

    private func validateAndStore(_ response: TransferResponse, url: String, request: ImageRequest) throws(ImageCoreError) -> LoadedBytes {
        // A request that keeps the image nowhere and wants no pixels (`validate`) gets the same verdict from `check`:
        // every JPEG block is still entropy-decoded, at a fraction of a full decode's work. Anything that is kept,
        // in memory or on disk, has passed a full decode.
        let keepsNothing = ((diskCache == nil && sharedTier == nil) || request.options.contains(.disableDiskCacheWrites))
            && request.options.contains(.disableMemoryCacheWrites) && !wantsPixels(request)
        let header: ImageHeader
        var validated: ValidatedImage?
        var warnings: [String] = []
        do {
            if keepsNothing {
                let checked = try configuration.inspector.check(response.body, subject: url, contentType: response.contentType)
                (header, warnings) = (checked.header, checked.warnings)
            } else {
                let image = try configuration.inspector.validate(response.body, subject: url, contentType: response.contentType)
                (header, validated) = (image.header, image)
            }
        } catch {
            var failure = error
            failure.received = ImageCoreError.ReceivedBody(
                status: response.status, contentType: response.contentType, byteCount: response.body.count,
                format: ImageFormat.sniff(response.body), header: try? configuration.inspector.inspectHeader(response.body, subject: url))
            throw failure
        }
        let metadata = DiskCacheMetadata(url: url, header: header, bytes: response.body,
                                         contentType: response.contentType, etag: response.etag,
                                         lastModified: response.lastModified, cacheControl: response.cacheControl)
        if let disk = diskCache, !request.options.contains(.disableDiskCacheWrites) {
            do {
                try disk.store(response.body, metadata: metadata)
            } catch {
                logger.warning("could not store to the disk cache", metadata: ["url": "\(url)", "reason": "\(error.message)"])
                warnings.append("not stored: \(error.message)")
            }
        }
        if !request.options.contains(.disableDiskCacheWrites) {
            sharedTier?.store(named: ImageKey(url: url).sharedObjectName, bytes: response.body, metadata: metadata)
        }
        return LoadedBytes(bytes: response.body, metadata: metadata, outcome: .networkFetch, validated: validated, warnings: warnings,
                           httpStatus: response.status, timings: response.timings, bytesDownloaded: response.downloadedBytes)
    }
}

/// What `loadBytes` found: the bytes, their metadata, how they were had, and the decoded image when already decoded.
struct LoadedBytes: Sendable {
    var bytes: [UInt8]
    var metadata: DiskCacheMetadata
    var outcome: ImageOutcome
    var validated: ValidatedImage?
    var warnings: [String] = []
    /// The other URL that served the image, when the one asked for has none.
    var servedBy: String?
    var httpStatus: Int?
    var timings: TransferTimings?
    var bytesDownloaded = 0
}

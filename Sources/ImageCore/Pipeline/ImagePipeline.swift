import Foundation
public import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Loads images through memory, then the data tiers (the local disk, a fleet's shared store), then the network,
/// validating everything it downloads, and makes the variants a request's processing asks for.
///
/// `image(for:)` is the one entry point. The pipeline itself keeps what is per request: the memory tier (pixels or
/// encoded bytes, `Configuration.memoryContent`, exact LRU limits, under `ImageKey.cacheKey`), the admission bound
/// (`maxPendingLoads`), the one coalescer (concurrent requests with one coalescing key share one load, and a variant
/// shares its source's load with requests for the original), the deadline (`requestTimeout`, which the coalescer
/// keeps) and the statistics. Loading an original is `OriginalLoader`'s stage (the tiers in order, revalidation, the
/// network, validation, other spellings); making a variant is `VariantMaker`'s. Each stage reads what a request may do
/// from its `LoadPolicy`. Thread-safety: call `image(for:)` from any number of tasks.
public final class ImagePipeline: Sendable {
    /// The configuration.
    public let configuration: Configuration
    /// The memory tier: pixels or encoded bytes (see `MemoryContent`), keyed by `ImageKey.cacheKey`.
    public let memoryCache: MemoryCache<String, CachedImage>
    /// Validated bytes by URL; nil when running without a disk cache. The first of `tiers`.
    public let diskCache: DiskCache?
    /// The network layer.
    public let downloader: Downloader
    /// The data tiers below memory, first to last: the local disk, then those of `Configuration.extraTiers` (a
    /// fleet's shared store).
    public let tiers: [any DataTier]
    /// Statistics since the pipeline was created: every request, by outcome and failure reason.
    public let statistics = PipelineStatistics()
    /// The one coalescer: loads in flight by request.
    let loads = TaskCoalescer<ImageRequest.CoalescingKey, Loaded>()
    /// Requests past the memory tier now (for `maxPendingLoads`).
    private let pending = NIOLockedValueBox(0)
    private let aliases: AliasBook
    private let originals: OriginalLoader
    private let variants: VariantMaker

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
        memoryCache = MemoryCache(countLimit: configuration.memoryCountLimit, costLimit: configuration.memoryCostLimit,
                                  policy: configuration.memoryPolicy)
        self.diskCache = diskCache
        let downloader = Downloader(configuration: configuration.downloader)
        self.downloader = downloader
        tiers = [diskCache].compactMap { $0 } + configuration.extraTiers.map { $0.make(downloader.engine, logger) }
        aliases = AliasBook(disk: diskCache, logger: logger)
        let negatives = NegativeCache(disk: diskCache, defaultLifetime: configuration.negativeLifetime, logger: logger)
        originals = OriginalLoader(configuration: configuration, tiers: tiers, downloader: downloader, aliases: aliases,
                                   negatives: negatives, logger: logger)
        let limiter = configuration.maxQueuedProcessing.map {
            WorkLimiter(concurrency: max(1, configuration.maxConcurrentProcessing), queue: max(0, $0))
        }
        variants = VariantMaker(configuration: configuration, tiers: tiers, aliases: aliases, limiter: limiter, logger: logger)
    }

    // MARK: - The entry point

    /// The image `request` asks for: from memory, else from the one load of its key (the tiers, else the network, then
    /// the processing), recorded in `statistics`.
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
        let policy = policy(for: request)
        guard policy.readsMemory else { return nil }
        var servedBy = request.url
        if !request.alternatives.isEmpty {
            guard let known = aliases.inMemory(request.url) else { return nil }
            servedBy = known ?? request.url
        }
        guard let hit = memoryHit(request, servedBy: servedBy), hit.bytes != nil, hit.image != nil || !policy.returnsPixels else { return nil }
        let response = response(hit, to: request, shared: false, started: started)
        if recording { statistics.record(response) }
        return response
    }

    /// The original image at `url` (a shorthand for `image(for: ImageRequest(url: url, alternatives: alternatives))`).
    public func image(for url: String, alternatives: [String] = []) async throws(ImageCoreError) -> ImageResponse {
        try await image(for: ImageRequest(url: url, alternatives: alternatives))
    }

    /// Waits until every write the tiers have accepted is made (the shared store's queue): a prefetch does before it
    /// reports, a service when it stops.
    public func drainTiers() async {
        for tier in tiers { await tier.drain() }
    }

    // MARK: - Memory, admission, coalescing, deadline

    /// A failure, and whether it was another request's load that failed.
    private struct Failure: Error {
        var error: ImageCoreError
        var shared = false
    }

    /// What `request` may do at each stage.
    private func policy(for request: ImageRequest) -> LoadPolicy {
        LoadPolicy(request, configuration: configuration, hasTiers: !tiers.isEmpty)
    }

    private func respond(to request: ImageRequest, started: ContinuousClock.Instant) async throws(Failure) -> ImageResponse {
        let policy = policy(for: request)
        if var hit = await fromMemory(request, policy: policy) {
            if hit.image == nil, policy.returnsPixels, let bytes = hit.bytes {
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
        let (loaded, joined) = try await shared(request, policy: policy, deadline: deadline)
        // A request for an original that joined a variant's load of it waits for its store as that variant does.
        return response(await loaded.settled(), to: request, shared: joined, started: started)
    }

    /// `request`'s entry in the memory tier as a load's result (a memory hit), or nil; nil at once for a reload.
    private func fromMemory(_ request: ImageRequest, policy: LoadPolicy) async -> Loaded? {
        guard policy.readsMemory else { return nil }
        return memoryHit(request, servedBy: await aliases.servingURL(of: request.url, alternatives: request.alternatives))
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
    private func shared(_ request: ImageRequest, policy: LoadPolicy, deadline: ContinuousClock.Instant?) async throws(Failure) -> (Loaded, Bool) {
        // Whether this request joined another's load, known once it waits: a failure it met is then that load's.
        let joined = NIOLockedValueBox(false)
        let expired = configuration.requestTimeout.map {
            ImageCoreError(.deadlineExceeded, subject: request.url, message: "the image was not ready within \($0)")
        }
        let expiry: @Sendable () -> any Error = { expired.map { $0 as any Error } ?? CancellationError() }
        let registered: @Sendable (Bool) -> Void = { value in joined.withLockedValue { $0 = value } }
        let operation: @Sendable () async throws -> Loaded = { [self] in try await load(request, policy: policy, deadline: deadline) }
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

    // MARK: - The stages

    /// One load: the original (`OriginalLoader`), or a variant (`VariantMaker`) of a source that requests for the
    /// original share; the result is kept in the memory tier.
    private func load(_ request: ImageRequest, policy: LoadPolicy, deadline: ContinuousClock.Instant?) async throws(ImageCoreError) -> Loaded {
        let loaded: Loaded
        if request.processing.isNone {
            loaded = try await originals.load(request, policy: policy, deadline: deadline)
        } else {
            loaded = try await variants.make(request, policy: policy) { () throws(ImageCoreError) in
                try await source(for: request, deadline: deadline)
            }
        }
        remember(loaded, for: request, policy: policy)
        return loaded
    }

    /// The source of a variant: from memory, else from its own load, which requests for the original (and for other
    /// variants) share.
    private func source(for request: ImageRequest, deadline: ContinuousClock.Instant?) async throws(ImageCoreError) -> Loaded {
        let source = request.original
        var sourcePolicy = policy(for: source)
        // No one asks for the original's pixels (none returned, none kept: the memory tier keeps encoded bytes, and
        // answers with pixels only when asked): a download is validated by the decode this variant needs.
        if !sourcePolicy.returnsPixels, configuration.memoryContent == .encoded { sourcePolicy.variant = request.processing }
        let policy = sourcePolicy
        if let hit = await fromMemory(source, policy: policy) { return hit }
        do {
            let (loaded, joined) = try await loads.run(source.coalescingKey) { [self] in
                let loaded = try await originals.load(source, policy: policy, deadline: deadline)
                remember(loaded, for: source, policy: policy)
                return loaded
            }
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

    /// Stores a load's result in the memory tier, as its content says, unless the request says not to.
    private func remember(_ loaded: Loaded, for request: ImageRequest, policy: LoadPolicy) {
        guard policy.writesMemory else { return }
        let entry: CachedImage
        switch configuration.memoryContent {
        case .decoded where loaded.header.format == .placeholder:
            // A placeholder has no pixels to keep: its bytes are what a hit answers.
            entry = CachedImage(header: loaded.header, contentType: loaded.contentType, validators: loaded.validators, bytes: loaded.bytes,
                                freshUntil: loaded.freshUntil)
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
}

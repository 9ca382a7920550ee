import Foundation
import Logging
import NIOCore

/// Makes the variant a request's processing asks for: found as another machine made it (a tier of images other
/// machines store, fresh), else from its source, found as this machine made it before (a tier of its own, while its
/// ETag is the one the current source gives it, so a source that changed upstream never serves an old variant), else
/// made now (decode shrunk on load, orientation, resample, encode, on the blocking pool, within the processing bound)
/// and stored in every tier with its source's freshness.
struct VariantMaker: Sendable {
    let configuration: ImagePipeline.Configuration
    /// The data tiers, first to last.
    let tiers: [any DataTier]
    let aliases: AliasBook
    /// The bound on variants being made and waiting, when a queue bound is set.
    let limiter: WorkLimiter?
    let logger: Logger

    /// The variant `request` asks for; `source()` loads its source (from memory, or its own coalesced load).
    ///
    /// A source just downloaded may still be being stored (`Loaded.pendingStore`): the variant is looked up, made and
    /// stored meanwhile, and the source's store is waited for before this returns or throws. A variant made now
    /// carries the store's warnings first, as it carries the rest of its source's.
    func make(_ request: ImageRequest, policy: LoadPolicy,
              source loadSource: () async throws(ImageCoreError) -> Loaded) async throws(ImageCoreError) -> Loaded {
        if policy.readsTiers, let stored = await madeElsewhere(request, policy: policy) { return stored }
        var source = try await loadSource()
        let sourceStore = source.pendingStore
        source.pendingStore = nil
        if policy.readsTiers, let stored = await madeHere(request, of: source, policy: policy) {
            _ = await sourceStore?.value
            return stored
        }
        let servedBy = source.servedBy ?? request.url
        let variant: ProcessedImage
        do throws(ImageCoreError) {
            variant = try await process(request, source: source, servedBy: servedBy)
        } catch {
            _ = await sourceStore?.value
            throw error
        }
        source.variantPixels = nil  // used: not held through the stores below, nor by the variant's waiters
        var loaded = source
        loaded.bytes = ByteBuffer(bytes: variant.bytes)
        loaded.header = ImageHeader(format: variant.format, width: variant.width, height: variant.height, byteCount: variant.bytes.count)
        loaded.contentType = variant.format.mimeType
        loaded.validators = source.validators.processed(request.processing)
        loaded.image = variant.image
        loaded.processed = true
        if policy.writesTiers {
            // Result storage: the variant under its own key, fresh as long as its source.
            let now = Date()
            let key = request.key(servedBy: servedBy)
            var metadata = DiskCacheMetadata(url: key.cacheKey, header: loaded.header, bytes: variant.bytes, contentType: nil,
                                             etag: loaded.validators.etag, lastModified: loaded.validators.lastModified, cacheControl: nil,
                                             storedAt: now)
            metadata.maxAgeSeconds = loaded.freshUntil.map { max(0, Int($0.timeIntervalSince(now))) }
            for tier in tiers { _ = await tier.store(variant.bytes, metadata: metadata, for: key) }
        }
        // Also without tier writes of its own: this request may have joined a source's load that another began.
        if let sourceStore { loaded.warnings = await sourceStore.value + loaded.warnings }
        return loaded
    }

    /// The variant as another machine made it, from a tier of other machines' images: fresh, verified, decoded only
    /// when pixels are wanted. Read before the source, so an instance of a fleet need not load it at all. Variants are
    /// stored under the URL that served the source: an instance that has not learnt the alias yet (an empty disk) looks
    /// under each spelling, so `cesium.jpg?w=64` finds what another made from caesium.jpg.
    private func madeElsewhere(_ request: ImageRequest, policy: LoadPolicy) async -> Loaded? {
        let shared = tiers.filter { !$0.holdsValidatedImages }
        guard !shared.isEmpty else { return nil }
        var candidates = [await aliases.servingURL(of: request.url, alternatives: request.alternatives)]
        if candidates[0] == request.url { candidates += request.alternatives }
        for tier in shared {
            for servedBy in candidates {
                guard let hit = await tier.entry(for: request.key(servedBy: servedBy), decode: nil) else { continue }
                let metadata = hit.entry.metadata
                guard !metadata.isStale(defaultLifetime: configuration.defaultFreshness), let etag = metadata.etag,
                      let lastModified = metadata.lastModified else { return nil }
                var image: DecodedImage?
                if metadata.format == .placeholder {
                    // Not an image: checked by reading it back, never decoded.
                    guard ImagePlaceholder(json: hit.entry.bytes) != nil else {
                        logger.warning("a stored placeholder does not read: making it again", metadata: ["url": "\(metadata.url)"])
                        return nil
                    }
                } else if policy.decodes {
                    do {
                        image = try await BlockingWork.run { [inspector = configuration.inspector] () throws(ImageCoreError) in
                            try inspector.validate(hit.entry.bytes, subject: servedBy).image
                        }
                    } catch {
                        logger.warning("a stored variant does not decode: making it again", metadata: ["url": "\(metadata.url)", "reason": "\(error.message)"])
                        return nil
                    }
                }
                let lifetime = Double(metadata.maxAgeSeconds ?? Int(configuration.defaultFreshness.components.seconds))
                return Loaded(servedBy: servedBy == request.url ? nil : servedBy, bytes: ByteBuffer(bytes: hit.entry.bytes),
                              header: metadata.header, contentType: metadata.format.mimeType,
                              validators: ImageValidators(etag: etag, lastModified: lastModified), image: image, outcome: tier.hitOutcome,
                              warnings: [], bytesDownloaded: 0, freshUntil: metadata.storedAt.addingTimeInterval(lifetime))
            }
        }
        return nil
    }

    /// The variant as this machine made it before, from a tier of its own: only while its ETag is the one `source`
    /// gives it; decoded only when pixels are wanted.
    private func madeHere(_ request: ImageRequest, of source: Loaded, policy: LoadPolicy) async -> Loaded? {
        let key = request.key(servedBy: source.servedBy ?? request.url)
        let validators = source.validators.processed(request.processing)
        for tier in tiers where tier.holdsValidatedImages {
            guard let hit = await tier.entry(for: key, decode: nil), hit.entry.metadata.etag == validators.etag else { continue }
            var image: DecodedImage?
            if policy.decodes, hit.entry.metadata.format != .placeholder {
                guard hit.entry.metadata.format.isDecodable,
                      let decoded = try? await BlockingWork.run({ [inspector = configuration.inspector] () throws(ImageCoreError) in
                          try inspector.validate(hit.entry.bytes, subject: key.cacheKey).image
                      }) else { continue }
                image = decoded
            }
            return Loaded(servedBy: source.servedBy, bytes: ByteBuffer(bytes: hit.entry.bytes), header: hit.entry.metadata.header,
                          contentType: hit.entry.metadata.format.mimeType, validators: validators, image: image, outcome: tier.hitOutcome,
                          warnings: [], bytesDownloaded: 0, freshUntil: source.freshUntil)
        }
        return nil
    }

    /// The variant made from `source`, on the blocking pool within the processing bound.
    ///
    /// - Throws: `.overloaded` past the bound, `.cancelled`, `.outputTooLarge`; `.processing` when a valid image cannot
    ///   be processed.
    private func process(_ request: ImageRequest, source: Loaded, servedBy: String) async throws(ImageCoreError) -> ProcessedImage {
        do throws(ImageCoreError) {
            return try await limited(servedBy) { () async throws(ImageCoreError) -> ProcessedImage in
                try await BlockingWork.run { [inspector = configuration.inspector, processing = request.processing] () throws(ImageCoreError) in
                    // The bytes decoded at the DCT scale that leaves the reduce a factor of three (ImageProcessor.shrinkOnLoad),
                    // however the source was loaded, so the variant is the same bytes cold or warm. That decode is the
                    // load's own when a download was validated by it (`VariantPixels`, for this variant or another at
                    // the same scale); the pixels the load had otherwise (a download is decoded to validate it) where
                    // that decode is the same (a JPEG not shrunk on load, a PNG, with no profile to convert), or for a
                    // source without bytes.
                    if let pixels = source.variantPixels, pixels.scale == ImageProcessor.shrinkOnLoad(
                        processing, width: pixels.source.header.width, height: pixels.source.header.height,
                        orientation: pixels.source.header.orientation) {
                        return try ImageProcessor.process(pixels.source, processing, subject: servedBy)
                    }
                    let bytes = source.bytes.map { Array($0.readableBytesView) }
                    if let image = source.image {
                        // The orientation from the bytes when they are at hand: a disk entry written before orientation
                        // was recorded does not have it. A JPEG whose header does not read here makes its own decode.
                        var header: ImageHeader? = source.header
                        if source.header.format == .jpeg, let bytes { header = try? inspector.inspectHeader(bytes, subject: servedBy) }
                        if let header, !(bytes.map { ImageProcessor.makesVariantFromOwnDecode($0, header: header, for: processing) } ?? false) {
                            return try ImageProcessor.process(ImageProcessor.Source(image: image, header: header), processing, subject: servedBy)
                        }
                    }
                    // Without pixels (or with pixels that are not sRGB) a source has its bytes (a load, or the encoded
                    // memory tier).
                    return try ImageProcessor.process(bytes ?? [], processing, subject: servedBy, inspector: inspector)
                }
            }
        } catch where error.reason == .outputTooLarge || error.reason == .overloaded || error.reason == .cancelled {
            throw error
        } catch {
            logger.error("processing failed", metadata: ["url": "\(servedBy)", "processing": "\(request.processing)", "message": "\(error.message)"])
            throw ImageCoreError(.processing, subject: servedBy, message: "the image could not be processed: \(error.message)")
        }
    }

    /// `work` inside the processing bound: `.overloaded` at once when as many variants as allowed are being made and
    /// waiting, `.cancelled` when the request goes away while it waits.
    private func limited<T: Sendable>(_ subject: String, _ work: () async throws(ImageCoreError) -> T) async throws(ImageCoreError) -> T {
        guard let limiter else { return try await work() }
        let result: T?
        do {
            result = try await limiter.run { try await work() }
        } catch let error as ImageCoreError {
            throw error
        } catch {
            throw ImageCoreError(.cancelled, subject: subject, message: "the request was cancelled while its variant waited to be made")
        }
        guard let result else {
            throw ImageCoreError(.overloaded, subject: subject, message: """
                \(limiter.concurrency) variants are being made and \(limiter.queue) wait already; retry shortly
                """)
        }
        return result
    }
}

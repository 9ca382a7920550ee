import Foundation
import Logging
import NIOCore

/// Loads an original image: from the data tiers in order (the local disk, then a fleet's shared store), revalidated
/// with upstream when stale, else from the network and validated (a full decode; a JPEG that is only a variant's
/// source, at that variant's DCT scale) before it is stored in every tier; an entry found in a lower tier is written
/// to the tiers above it. When upstream has no image at the URL (404 or 410), the request's other spellings are tried
/// once, in order, and the one that works remembered (`AliasBook`). Nothing invalid is stored: bytes reach a tier
/// only after a decode of every stage has succeeded. The pipeline's memory tier, coalescing and deadline are around
/// it, not in it.
struct OriginalLoader: Sendable {
    let configuration: ImagePipeline.Configuration
    /// The data tiers, first to last.
    let tiers: [any DataTier]
    let downloader: Downloader
    let aliases: AliasBook
    /// Answers that an image is missing upstream, not asked again while remembered.
    let negatives: NegativeCache
    let logger: Logger

    /// The original `request` names: bytes from a tier or the network (other spellings tried), decoded when
    /// `policy` wants pixels.
    func load(_ request: ImageRequest, policy: LoadPolicy, deadline: ContinuousClock.Instant?) async throws(ImageCoreError) -> Loaded {
        var loaded = try await resolveBytes(request, policy: policy, deadline: deadline)
        if loaded.validated == nil, policy.decodes {
            let source = loaded.servedBy ?? request.url
            do {
                loaded.validated = try await validated(loaded.bytes, of: source, contentType: loaded.metadata.contentType)
            } catch {
                // Stored bytes that pass their checksum but no longer decode (a stricter decoder, say): drop and refetch.
                logger.warning("removing a cache entry that no longer decodes", metadata: ["url": "\(source)", "reason": "\(error.message)"])
                if policy.writesTiers { for tier in tiers { await tier.remove(ImageKey(url: source, addresses: policy.addresses)) } }
                let servedBy = loaded.servedBy
                loaded = try await fromNetwork(source, policy: policy, deadline: deadline)
                loaded.servedBy = servedBy
            }
        }
        let metadata = loaded.metadata
        return Loaded(servedBy: loaded.servedBy, bytes: ByteBuffer(bytes: loaded.bytes), header: metadata.header,
                      contentType: metadata.format.mimeType, originContentType: metadata.contentType,
                      validators: ImageValidators(source: metadata), image: loaded.validated?.image,
                      variantPixels: loaded.variantPixels, outcome: loaded.outcome,
                      warnings: loaded.warnings + (loaded.validated?.warnings ?? []), httpStatus: loaded.httpStatus,
                      timings: loaded.timings, bytesDownloaded: loaded.bytesDownloaded,
                      freshUntil: metadata.storedAt.addingTimeInterval(
                          Double(metadata.maxAgeSeconds ?? Int(configuration.defaultFreshness.components.seconds))),
                      pendingStore: loaded.pendingStore)
    }

    // MARK: - Other spellings

    /// `loadBytes(url)`, or, when upstream has no image there (404 or 410), the first of the alternatives that loads.
    /// A working alternative is remembered and tried first next time; one that stops working is forgotten.
    private func resolveBytes(_ request: ImageRequest, policy: LoadPolicy, deadline: ContinuousClock.Instant?) async throws(ImageCoreError) -> LoadedBytes {
        let url = request.url, alternatives = request.alternatives
        guard !alternatives.isEmpty else { return try await loadBytes(url, policy: policy, deadline: deadline) }
        if policy.readsTiers, let alias = await aliases.alias(of: url) {
            do throws(ImageCoreError) {
                var loaded = try await loadBytes(alias, policy: policy, deadline: deadline)
                loaded.servedBy = alias
                return loaded
            } catch where error.isNotFound {
                await aliases.remember(nil, of: url, persist: policy.writesTiers)
            }
        }
        do throws(ImageCoreError) {
            return try await loadBytes(url, policy: policy, deadline: deadline)
        } catch where error.isNotFound {
            // Only "not there either" moves on to the next spelling; another failure (a timeout, a 5xx, an invalid
            // image) is the answer, since the image may well be there.
            for alternative in alternatives where alternative != url {
                do throws(ImageCoreError) {
                    var loaded = try await loadBytes(alternative, policy: policy, deadline: deadline)
                    await aliases.remember(alternative, of: url, persist: policy.writesTiers)
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

    // MARK: - Tiers, then the network

    /// The bytes at `url`: from the first tier that has them (revalidated when stale), else from the network.
    private func loadBytes(_ url: String, policy: LoadPolicy, deadline: ContinuousClock.Instant?) async throws(ImageCoreError) -> LoadedBytes {
        guard policy.readsTiers, let found = await fromTiers(ImageKey(url: url, addresses: policy.addresses), policy: policy) else {
            return try await fromNetwork(url, policy: policy, deadline: deadline)
        }
        guard found.metadata.isStale(defaultLifetime: configuration.defaultFreshness), policy.mayDownload else { return found }
        return try await revalidate(found, url: url, policy: policy, deadline: deadline)
    }

    /// What the first tier holding `key` has. Pixels wanted of a fresh entry are decoded in the tier's own trip when it
    /// has one (the disk); what other machines stored is decoded before it is used, and a tier's hit is written to the
    /// tiers above it. An object that does not decode is passed over (the network's copy then replaces it).
    private func fromTiers(_ key: ImageKey, policy: LoadPolicy) async -> LoadedBytes? {
        let (inspector, freshness) = (configuration.inspector, configuration.defaultFreshness)
        var decode: (@Sendable (DiskCacheEntry) -> ValidatedImage?)?
        if policy.decodes {
            decode = { entry in
                guard !entry.metadata.isStale(defaultLifetime: freshness) else { return nil }
                // A decode that fails is left to `load`, which removes the entry and fetches again.
                return try? inspector.validate(entry.bytes, subject: key.url, contentType: entry.metadata.contentType)
            }
        }
        for (level, tier) in tiers.enumerated() {
            guard let hit = await tier.entry(for: key, decode: decode) else { continue }
            var found = LoadedBytes(bytes: hit.entry.bytes, metadata: hit.entry.metadata, outcome: tier.hitOutcome, validated: hit.validated)
            if !tier.holdsValidatedImages {
                do throws(ImageCoreError) {
                    found.validated = try await validated(hit.entry.bytes, of: key.url, contentType: hit.entry.metadata.contentType)
                } catch {
                    logger.warning("a stored object does not decode: fetching the image again", metadata: ["url": "\(key.url)", "reason": "\(error.message)"])
                    continue
                }
            }
            if policy.writesTiers { found.warnings += await store(found.bytes, metadata: found.metadata, for: key, in: tiers[..<level]) }
            return found
        }
        return nil
    }

    /// A stale entry checked with upstream: without validators a plain refetch; with them a 304 confirms the stored
    /// bytes, fresh again in every tier. A transient failure serves the stale entry, with a warning, when the
    /// configuration allows; upstream's 404 removes it.
    private func revalidate(_ stored: LoadedBytes, url: String, policy: LoadPolicy, deadline: ContinuousClock.Instant?) async throws(ImageCoreError) -> LoadedBytes {
        var conditional = TransferRequest(url: url, options: configuration.downloader.transferOptions)
        conditional.addresses = policy.addresses
        conditional.ifNoneMatch = stored.metadata.etag
        conditional.ifModifiedSince = stored.metadata.lastModified
        let response: TransferResponse
        do {
            response = try await downloader.fetch(conditional, deadline: deadline)
        } catch {
            guard configuration.serveStaleOnError, error.isTransient || error.reason == .dns else {
                if error.isNotFound {
                    let key = ImageKey(url: url, addresses: policy.addresses)
                    for tier in tiers { await tier.remove(key) }
                    await negatives.remember(error, for: key, persist: policy.writesTiers)
                }
                throw error
            }
            var served = stored
            served.warnings = ["served stale from \(stored.outcome == .sharedHit ? "the shared store" : "disk"): revalidation failed: \(error.reason.rawValue): \(error.message)"]
            return served
        }
        guard response.status == 304 else { return try await accept(response, url: url, policy: policy) }
        var metadata = stored.metadata
        metadata.storedAt = Date()
        if let cacheControl = response.cacheControl { metadata.maxAgeSeconds = DiskCacheMetadata.maxAge(fromCacheControl: cacheControl) }
        if let etag = response.etag { metadata.etag = etag }
        if policy.writesTiers {
            // Every tier sees the entry fresh again: this disk, and the fleet.
            for tier in tiers { _ = await tier.store(stored.bytes, metadata: metadata, for: ImageKey(url: url, addresses: policy.addresses)) }
        }
        return LoadedBytes(bytes: stored.bytes, metadata: metadata, outcome: .revalidated, httpStatus: 304, timings: response.timings,
                           bytesDownloaded: response.downloadedBytes)
    }

    private func fromNetwork(_ url: String, policy: LoadPolicy, deadline: ContinuousClock.Instant?) async throws(ImageCoreError) -> LoadedBytes {
        guard policy.mayDownload else {
            throw ImageCoreError(.notCached, subject: url, message: "not in the caches, and the request allows no download")
        }
        let key = ImageKey(url: url, addresses: policy.addresses)
        if policy.readsTiers, let known = await negatives.answer(for: key) { throw known.error(for: url, now: Date()) }
        var request = TransferRequest(url: url, options: configuration.downloader.transferOptions)
        request.addresses = policy.addresses
        let response: TransferResponse
        do {
            response = try await downloader.fetch(request, deadline: deadline)
        } catch {
            if error.isNotFound { await negatives.remember(error, for: key, persist: policy.writesTiers) }
            throw error
        }
        guard response.status != 304 else {
            throw ImageCoreError(.httpStatus, subject: url, message: "unexpected 304 to an unconditional request", httpStatus: 304)
        }
        // A reload asked upstream whatever was remembered: what it finds replaces the answer that the image is missing.
        if !policy.readsTiers { await negatives.forget(key, persist: policy.writesTiers) }
        return try await accept(response, url: url, policy: policy)
    }

    /// Validates a 2xx body on the blocking pool (a full decode; `check` when the request keeps the image nowhere; a
    /// JPEG only a variant's source, the decode that variant needs: `LoadPolicy.variant`), then stores it in every tier.
    ///
    /// - Throws: the validator's error, carrying what was received (status, type, size, format, header if readable).
    private func accept(_ response: TransferResponse, url: String, policy: LoadPolicy) async throws(ImageCoreError) -> LoadedBytes {
        let inspector = configuration.inspector
        typealias Verdict = (header: ImageHeader, validated: ValidatedImage?, variantPixels: VariantPixels?, warnings: [String])
        let verdict = try await BlockingWork.run { () throws(ImageCoreError) -> Verdict in
            do throws(ImageCoreError) {
                // A request that keeps the image nowhere and wants no pixels (`validate`) gets the same verdict from
                // `check`: every JPEG block is still entropy-decoded, at a fraction of a full decode's work. Anything
                // that is kept, in memory or in a tier, has passed a decode of every stage: in full, or, for the
                // source of a variant no one wants the original's pixels of, a JPEG at that variant's DCT scale (the
                // same verdict, `check`'s), whose pixels then make the variant.
                if policy.keepsNothing {
                    let checked = try inspector.check(response.body, subject: url, contentType: response.contentType)
                    return (checked.header, nil, nil, checked.warnings)
                }
                if let variant = policy.variant, ImageFormat.sniff(response.body) == .jpeg {
                    let source = try ImageProcessor.decode(response.body, for: variant, subject: url, inspector: inspector, checking: true)
                    let header = source.header
                    let scale = ImageProcessor.shrinkOnLoad(variant, width: header.width, height: header.height, orientation: header.orientation)
                    return (header, nil, VariantPixels(scale: scale, source: source),
                            ImageInspector.contentTypeWarnings(.jpeg, servedAs: response.contentType) + source.warnings)
                }
                let image = try inspector.validate(response.body, subject: url, contentType: response.contentType)
                return (image.header, image, nil, [])
            } catch {
                var failure = error
                failure.received = ImageCoreError.ReceivedBody(
                    status: response.status, contentType: response.contentType, byteCount: response.body.count,
                    format: ImageFormat.sniff(response.body), header: try? inspector.inspectHeader(response.body, subject: url))
                throw failure
            }
        }
        let metadata = DiskCacheMetadata(url: url, header: verdict.header, bytes: response.body, contentType: response.contentType,
                                         etag: response.etag, lastModified: response.lastModified, cacheControl: response.cacheControl)
        var loaded = LoadedBytes(bytes: response.body, metadata: metadata, outcome: .networkFetch, validated: verdict.validated,
                                 variantPixels: verdict.variantPixels, warnings: verdict.warnings, httpStatus: response.status,
                                 timings: response.timings, bytesDownloaded: response.downloadedBytes)
        // The tiers' warnings first, then the verdict's, on every path (`load` appends a full decode's after these).
        if policy.writesTiers {
            let key = ImageKey(url: url, addresses: policy.addresses)
            if policy.variant != nil {
                // Only a variant's source: the variant is looked up and made while the bytes are written (the
                // taker of the result waits for the store: `Loaded.settled()`, `VariantMaker.make`).
                loaded.pendingStore = Task { [self] in await store(response.body, metadata: metadata, for: key, in: tiers[...]) }
            } else {
                loaded.warnings = await store(response.body, metadata: metadata, for: key, in: tiers[...]) + loaded.warnings
            }
        }
        return loaded
    }

    // MARK: - Helpers

    /// `bytes` fully decoded (validated) on the blocking pool.
    private func validated(_ bytes: [UInt8], of url: String, contentType: String?) async throws(ImageCoreError) -> ValidatedImage {
        try await BlockingWork.run { [inspector = configuration.inspector] () throws(ImageCoreError) in
            try inspector.validate(bytes, subject: url, contentType: contentType)
        }
    }

    /// Stores validated bytes in each of `tiers`; returns the reasons any of them stored nothing.
    private func store(_ bytes: [UInt8], metadata: DiskCacheMetadata, for key: ImageKey, in tiers: ArraySlice<any DataTier>) async -> [String] {
        var warnings: [String] = []
        for tier in tiers {
            if let warning = await tier.store(bytes, metadata: metadata, for: key) { warnings.append(warning) }
        }
        return warnings
    }
}

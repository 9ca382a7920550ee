import Catalogue
import Foundation
@testable import ImageCore
import Synchronization
import Testing
import TestSupport
import TileCacheOrigin
import NIOCore

@Suite("ImagePipeline against the loopback origin", .timeLimit(.minutes(5)), .heavy)
struct ImagePipelineTests {
    func pipeline(_ directory: String?, memoryBytes: Int = 256 << 20, freshness: Duration = .seconds(3600)) -> ImagePipeline {
        var configuration = ImagePipeline.Configuration()
        configuration.diskDirectory = directory
        configuration.memoryCountLimit = 1000
        configuration.memoryCostLimit = memoryBytes
        configuration.defaultFreshness = freshness
        configuration.downloader = .testing()
        return ImagePipeline(configuration: configuration)
    }

    func urls(_ origin: OriginServer, count: Int = 12) -> [String] {
        origin.urlBuilder.images(for: Array(ElementCatalogue.standard.elements.prefix(count))).map(\.url)
    }

    @Test("an image a trusted load cached at a private address never answers a request limited to public addresses, from memory, disk or as a variant")
    func publicOnlyIsKeptApart() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let url = urls(origin, count: 1)[0]
                let first = pipeline(directory)
                _ = try await first.image(for: ImageRequest(url: url))  // trusted: fetched from loopback, in memory and on disk
                _ = try await first.image(for: ImageRequest(url: url, processing: ImageProcessing(width: 32)))
                for processing in [ImageProcessing.none, ImageProcessing(width: 32)] {
                    for pipeline in [first, pipeline(directory)] {  // memory, then disk in a new pipeline
                        let error = await #expect(throws: ImageCoreError.self) {
                            try await pipeline.image(for: ImageRequest(url: url, processing: processing, addresses: .publicOnly))
                        }
                        #expect(error?.reason == .forbiddenAddress, "\(processing): \(String(describing: error))")
                    }
                }
                // The trusted entries are still there for trusted requests.
                let again = try await pipeline(directory).image(for: ImageRequest(url: url, options: .returnCacheDataDontLoad))
                #expect(again.outcome == .diskHit)
            }
        }
    }

    @Test("cold run fetches from the network, warm run hits memory, a restart hits disk")
    func outcomeAccounting() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let urls = urls(origin)
                let first = pipeline(directory)
                let cold = await first.prefetch(urls)
                #expect(cold.report.networkFetches == urls.count && cold.report.failed == 0)
                #expect(cold.report.hitRate == 0 && cold.report.bytesDownloaded > 0)
                #expect(cold.results.allSatisfy { $0.outcome == .networkFetch })
                // Each URL asked once; on a loaded machine a transfer may time out and be retried, which is a request
                // more and still one fetch.
                let coldRequests = origin.statistics.requests
                #expect(origin.statistics.requestsByPath.count == urls.count && coldRequests >= urls.count)
                let warm = await first.prefetch(urls)
                #expect(warm.report.memoryHits == urls.count && warm.report.hitRate == 1 && warm.report.bytesDownloaded == 0)
                #expect(origin.statistics.requests == coldRequests)

                let restarted = pipeline(directory)
                let fromDisk = await restarted.prefetch(urls)
                #expect(fromDisk.report.diskHits == urls.count)
                #expect(origin.statistics.requests == coldRequests)
                let lifetime = first.statistics.snapshot
                #expect(lifetime.networkFetches == urls.count && lifetime.memoryHits == urls.count)
                #expect(lifetime.latencyMilliseconds["networkFetch"]?.count == urls.count)
                #expect(lifetime.latencyMilliseconds["memoryHit"].map { $0.p50 <= $0.p99 && $0.p99 <= $0.max } == true)
            }
        }
    }

    @Test("a prefetch starts the images the disk cache lacks first; results stay in the order given")
    func missesStartFirst() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let urls = urls(origin, count: 4)  // a thumbnail and a photo each: eight URLs
                let held = [urls[0], urls[2], urls[3], urls[6]]
                _ = await pipeline(directory).prefetch(held)
                // A new process: empty memory, the disk holds four of the eight. One load at a time, so each finishes
                // before the next starts and the progress calls see the start order: the four misses, then four hits.
                let restarted = pipeline(directory)
                #expect(await restarted.startOrder(urls.map { ImageRequest(url: $0) }) == [1, 4, 5, 7, 0, 2, 3, 6])
                #expect(await pipeline(nil).startOrder(urls.map { ImageRequest(url: $0) }) == Array(0..<8))
                let hitsSeen = Mutex<[Int]>([])
                let run = await restarted.prefetch(urls, concurrency: 1) { progress in hitsSeen.withLock { $0.append(progress.hits) } }
                #expect(hitsSeen.withLock { $0 } == [0, 0, 0, 0, 1, 2, 3, 4])
                #expect(run.results.map(\.url) == urls)
                #expect(run.results.map { held.contains($0.url) ? $0.outcome == .diskHit : $0.outcome == .networkFetch } == Array(repeating: true, count: 8))
            }
        }
    }

    @Test(".returnCacheDataDontLoad answers from the caches only: a miss is .notCached and nothing is downloaded")
    func cachesOnly() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let url = urls(origin, count: 1)[0]
                let cachesOnly = ImageRequest(url: url, options: [.returnCacheDataDontLoad])
                await #expect(throws: ImageCoreError.self) { try await pipeline(directory).image(for: cachesOnly) }
                do throws(ImageCoreError) {
                    _ = try await pipeline(directory).image(for: cachesOnly)
                } catch {
                    #expect(error.reason == .notCached && error.subject == url)
                }
                #expect(origin.statistics.requests == 0)
                _ = try await pipeline(directory).image(for: url)
                let fromDisk = try await pipeline(directory).image(for: cachesOnly)
                #expect(fromDisk.outcome == .diskHit && fromDisk.image != nil)
                #expect(origin.statistics.requests == 1)
            }
        }
    }

    @Test("N identical concurrent requests make one origin request and all get the bytes")
    func coalescing() async throws {
        try await withOrigin({ $0.latency = .milliseconds(150) }) { origin in
            let pipeline = pipeline(nil)
            let path = "/periodictable/Tiles/026/s7.JPG"
            let responses = try await withThrowingTaskGroup(of: ImageResponse.self) { group in
                for _ in 0..<20 { group.addTask { try await pipeline.image(for: origin.baseURL + path) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(responses.count == 20 && responses.allSatisfy { $0.bytes.map { Array($0.readableBytesView) } == origin.body(forPath: path) })
            #expect(origin.statistics.requestsByPath[path] == 1)
            #expect(pipeline.statistics.snapshot.sharedLoads.succeeded == 19 && pipeline.downloader.statistics.transfers == 1)
        }
    }

    @Test("a cancelled caller leaves; the shared load goes on for the others")
    func coalescedCancellation() async throws {
        try await withOrigin({ $0.latency = .milliseconds(300) }) { origin in
            let pipeline = pipeline(nil)
            let url = origin.baseURL + "/periodictable/Tiles/003/s7.JPG"
            let leaving = Task { try await pipeline.image(for: url) }
            let staying = Task { try await pipeline.image(for: url) }
            try await waitUntil("both callers wait on one load") { pipeline.loads.waiterCount == 2 }
            leaving.cancel()
            await #expect(throws: (any Error).self) { try await leaving.value }
            #expect(try await staying.value.httpStatus == 200)
            #expect(origin.statistics.requests == 1)
        }
    }

    @Test("variants are stored on disk: a restarted pipeline reads them (diskHit, same bytes, no resize); a stale one is made again")
    func diskVariants() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                func encoded() -> ImagePipeline {
                    var configuration = ImagePipeline.Configuration()
                    configuration.diskDirectory = directory
                    configuration.memoryContent = .encoded
                    configuration.downloader = .testing()
                    return ImagePipeline(configuration: configuration)
                }
                let url = urls(origin, count: 1)[0]
                let webp = ImageRequest(url: url, processing: ImageProcessing(width: 40, height: 40, fit: .cover, format: .webp))
                let made = try await encoded().image(for: webp)
                #expect(made.processed && made.header.format == .webp)
                let requests = origin.statistics.requests

                let restarted = encoded()
                let again = try await restarted.image(for: webp)
                #expect(again.outcome == .diskHit && !again.processed && again.bytes == made.bytes && again.validators == made.validators)
                #expect(again.header.format == .webp && again.header.width == 40)
                #expect(restarted.statistics.snapshot.processed == 0 && origin.statistics.requests == requests)
                let verification = try await #require(restarted.diskCache).verifyAll()
                #expect(verification.removed == 0 && verification.valid == 2)  // the original and its WebP variant

                // A variant whose ETag is not the one the source gives it now (the source changed) is never served.
                let disk = try #require(restarted.diskCache)
                var metadata = try #require(await disk.allMetadata().first { $0.url.contains("#") })
                metadata.etag = "\"0123-r4w40h40cwebp\""
                let bytes = Array(try #require(made.bytes).readableBytesView)
                _ = try await disk.store(bytes, metadata: metadata)
                let remade = try await encoded().image(for: webp)
                #expect(remade.processed && remade.validators == made.validators)
            }
        }
    }

    @Test("encoded memory: a hit returns the origin's bytes and no pixels unless asked; limits hold in encoded bytes")
    func encodedMemory() async throws {
        try await withOrigin { origin in
            var configuration = ImagePipeline.Configuration()
            configuration.diskDirectory = nil
            configuration.memoryContent = .encoded
            configuration.downloader = .testing()
            let pipeline = ImagePipeline(configuration: configuration)
            let url = urls(origin, count: 1)[0]
            let cold = try await pipeline.image(for: url)
            #expect(cold.outcome == .networkFetch && cold.image == nil)
            let hit = try await pipeline.image(for: url)
            let body = origin.body(forPath: String(url.dropFirst(origin.baseURL.count)))
            #expect(hit.outcome == .memoryHit && hit.bytes.map { Array($0.readableBytesView) } == body && hit.image == nil)
            #expect(hit.validators == cold.validators && hit.header == cold.header)
            // The limit counts the storage the bytes hold (a ByteBuffer's is a power of two), not only the bytes.
            #expect(pipeline.memoryCache.totalCost == hit.bytes?.storageCapacity && (body?.count ?? .max) <= pipeline.memoryCache.totalCost)
            let pixels = try await pipeline.image(for: ImageRequest(url: url, options: .returnPixels))
            #expect(pixels.outcome == .memoryHit && pixels.image?.width == hit.header.width)
            #expect(origin.statistics.requests == 1)
        }
    }

    @Test("a variant: one download shared with the original, stored under its own key, its own ETag, found in memory next")
    func variant() async throws {
        try await withOrigin({ $0.latency = .milliseconds(100) }) { origin in
            var configuration = ImagePipeline.Configuration()
            configuration.diskDirectory = nil
            configuration.memoryContent = .encoded
            configuration.downloader = .testing()
            let pipeline = ImagePipeline(configuration: configuration)
            let url = urls(origin, count: 1)[0]
            async let original = pipeline.image(for: url)
            async let small = pipeline.image(for: ImageRequest(url: url, processing: ImageProcessing(width: 64)))
            async let medium = pipeline.image(for: ImageRequest(url: url, processing: ImageProcessing(width: 100)))
            let (o, s, m) = try await (original, small, medium)
            #expect(origin.statistics.requests == 1)
            #expect(s.processed && s.header.width == 64 && s.header.format == .jpeg && ImageFormat.sniff(Array(s.bytes!.readableBytesView)) == .jpeg)
            #expect(m.processed && m.header.width == 100 && !o.processed)
            // The source's tag, the processing revision and the options: a new resampler never reuses an old tag.
            #expect(s.validators.etag == String(o.validators.etag.dropLast()) + "-r4w64\"" && s.validators.lastModified == o.validators.lastModified)
            #expect(m.validators.etag.hasSuffix("-r4w100\""))
            let again = try await pipeline.image(for: ImageRequest(url: url, processing: ImageProcessing(width: 64)))
            #expect(again.outcome == .memoryHit && !again.processed && again.bytes == s.bytes && again.validators == s.validators)
            #expect(pipeline.statistics.snapshot.processed == 2)
        }
    }

    /// A tier that holds nothing and stores nothing, saying why: a source's store (an original's key) waits until a
    /// variant's store has begun, or 10 s (scaled), and records which.
    final class GatedTier: DataTier {
        let events = Mutex<[String]>([])
        var hitOutcome: ImageOutcome { .sharedHit }
        var holdsValidatedImages: Bool { true }

        func entry(for key: ImageKey, decode: (@Sendable (DiskCacheEntry) -> ValidatedImage?)?) async -> TierHit? { nil }

        func store(_ bytes: [UInt8], metadata: DiskCacheMetadata, for key: ImageKey) async -> String? {
            guard key.processing.isNone else {
                events.withLock { $0.append("variant stored") }
                return nil
            }
            events.withLock { $0.append("source store begun") }
            let waited = (try? await waitUntil("a variant's store begins", within: .seconds(10)) { [self] in
                events.withLock { $0.contains("variant stored") }
            }) != nil
            events.withLock { $0.append(waited ? "source stored after the variant's store began" : "source stored after 10 s") }
            return "not stored: the gated tier keeps nothing"
        }
    }

    @Test("a variant's cold miss makes and stores the variant while its downloaded source is being stored, and answers after both, the source's warning first")
    func variantWhileSourceStores() async throws {
        try await withOrigin { origin in
            let tier = GatedTier()
            var configuration = ImagePipeline.Configuration()
            configuration.diskDirectory = nil
            configuration.memoryContent = .encoded
            configuration.downloader = .testing()
            configuration.extraTiers = [DataTierFactory(settings: "gated") { _, _ in tier }]
            let pipeline = ImagePipeline(configuration: configuration)
            let url = urls(origin, count: 1)[0]
            let variant = try await pipeline.image(for: ImageRequest(url: url, processing: ImageProcessing(width: 64)))
            #expect(variant.outcome == .networkFetch && variant.processed && variant.header.width == 64)
            // Before the change the source's store came first, and ran out its 10 s waiting for a store that had not begun.
            #expect(tier.events.withLock { $0 } == ["source store begun", "variant stored", "source stored after the variant's store began"])
            #expect(variant.warnings.first == "not stored: the gated tier keeps nothing", "\(variant.warnings)")
            // An original: its store is waited for in its load, as before.
            let original = try await pipeline.image(for: ImageRequest(url: urls(origin, count: 2)[1]))
            #expect(original.outcome == .networkFetch && original.warnings.first == "not stored: the gated tier keeps nothing")
        }
    }

    @Test("a variant of a disk entry is made from the stored source, which is not downloaded again")
    func variantFromDisk() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let url = urls(origin, count: 1)[0]
                _ = try await pipeline(directory).image(for: url)
                let restarted = pipeline(directory)
                let variant = try await restarted.image(for: ImageRequest(url: url, processing: ImageProcessing(width: 32)))
                #expect(variant.outcome == .diskHit && variant.processed && variant.header.width == 32)
                #expect(origin.statistics.requests == 1)
            }
        }
    }

    @Test("the request deadline: the caller gets deadline-exceeded in time, its transfer cut to fit, nothing retried past it")
    func deadline() async throws {
        try await withOrigin({ $0.faults = [FaultRule(pathContains: "", fault: .noResponse)] }) { origin in
            var configuration = ImagePipeline.Configuration()
            configuration.diskDirectory = nil
            configuration.downloader = .testing()
            configuration.requestTimeout = TestTime.scaled(.milliseconds(400))
            let pipeline = ImagePipeline(configuration: configuration)
            let started = ContinuousClock.now
            let error = await #expect(throws: ImageCoreError.self) { try await pipeline.image(for: urls(origin, count: 1)[0]) }
            #expect(error?.reason == .deadlineExceeded)
            // Without the deadline the caller would wait for three attempts of the 10 s transfer timeout (30 s and more).
            // The bound is loose on purpose: with decoding on the cooperative threads, the full suite's load has delayed
            // the deadline's wake-up by 11 s.
            #expect(ContinuousClock.now - started < TestTime.scaled(.seconds(20)))
            #expect(pipeline.statistics.snapshot.failures["deadline-exceeded"] == 1)
        }
    }

    @Test("a transfer cut to a deadline gets libcurl a timeout in whole milliseconds rounded up: it never ends before the deadline")
    func fittedTimeoutRoundsUp() throws {
        #expect(Duration.nanoseconds(299_000_001).milliseconds == 300)
        #expect(Duration.milliseconds(300).milliseconds == 300)
        #expect(Duration.seconds(10).milliseconds == 10_000)
        #expect(Duration.zero.milliseconds == 0)
        let request = TransferRequest(url: "http://127.0.0.1:1/periodictable/Tiles/001/s7.JPG")
        for left in [Duration.microseconds(1_500), .microseconds(299_400), .microseconds(399_999), .milliseconds(400)] {
            let deadline = ContinuousClock.now + left
            let fitted = try Downloader.fitting(request, before: deadline)
            // What libcurl is given (CURLOPT_TIMEOUT_MS), counted from the transfer's start, which is after `fitting`.
            #expect(Duration.milliseconds(fitted.options.totalTimeout.milliseconds) >= fitted.options.totalTimeout, "\(left)")
            #expect(fitted.options.totalTimeout <= left)
        }
    }

    @Test("past maxPendingLoads a request fails at once as overloaded; memory hits are never refused")
    func admission() async throws {
        try await withOrigin({ $0.latency = .milliseconds(300) }) { origin in
            var configuration = ImagePipeline.Configuration()
            configuration.diskDirectory = nil
            configuration.downloader = .testing()
            configuration.maxPendingLoads = 1
            let pipeline = ImagePipeline(configuration: configuration)
            let urls = urls(origin, count: 2)
            let first = Task { try await pipeline.image(for: urls[0]) }
            try await waitUntil("the first load is pending") { pipeline.loads.inFlightCount == 1 }
            let error = await #expect(throws: ImageCoreError.self) { try await pipeline.image(for: urls[1]) }
            #expect(error?.reason == .overloaded)
            _ = try await first.value
            #expect(try await pipeline.image(for: urls[0]).outcome == .memoryHit)
        }
    }

    @Test("no-store requests read no cache and write none")
    func noStore() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let url = urls(origin, count: 1)[0]
                let warm = pipeline(directory)
                _ = try await warm.image(for: url)
                let checked = try await warm.image(for: ImageRequest(url: url, options: .noStore))
                #expect(checked.outcome == .networkFetch && checked.httpStatus == 200 && origin.statistics.requests == 2)
                // Kept nowhere and no pixels asked for: checked (same verdict, no pixels), with the full header.
                let full = try await warm.image(for: url)
                #expect(checked.image == nil && checked.header == full.header && checked.header.width > 0)
                let fresh = pipeline(directory + "/other")
                _ = try await fresh.image(for: ImageRequest(url: url, options: .noStore))
                #expect(await fresh.diskCache?.count == 0 && fresh.memoryCache.count == 0)
            }
        }
    }

    @Test("a memory limit smaller than the set evicts, and misses fall back to disk")
    func memoryLimitFallsBackToDisk() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let urls = urls(origin, count: 6)
                let small = pipeline(directory, memoryBytes: 1 << 20)
                _ = await small.prefetch(urls)
                #expect(small.memoryCache.totalCost <= 1 << 20)
                let again = await small.prefetch(urls)
                #expect(again.report.memoryHits + again.report.diskHits == urls.count)
                #expect(again.report.diskHits > 0)
            }
        }
    }

    @Test("a stale entry with an ETag is revalidated by a 304")
    func revalidation() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin({ $0.maxAgeSeconds = 0 }) { origin in
                let url = urls(origin, count: 1)[0]
                _ = try await pipeline(directory).image(for: url)
                let response = try await pipeline(directory).image(for: url)
                #expect(response.outcome == .revalidated)
                #expect(origin.statistics.requests == 2)
                #expect(response.bytesDownloaded == 0)
            }
        }
    }

    @Test("a stale entry is served from disk when revalidation fails transiently")
    func serveStale() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin({ $0.maxAgeSeconds = 0 }) { origin in
                let url = urls(origin, count: 1)[0]
                _ = try await pipeline(directory).image(for: url)
                origin.setFaults([FaultRule(pathContains: "", fault: .status(503))])
                let response = try await pipeline(directory).image(for: url)
                #expect(response.outcome == .diskHit)
                #expect(response.warnings.contains { $0.contains("served stale") })
            }
        }
    }

    @Test("invalid responses fail with their reason and nothing is stored", arguments: [
        (Fault.htmlPage, ImageCoreError.Reason.notAnImage),
        (Fault.hugeDimensions, .dimensions),
        (Fault.status(404), .httpStatus),
        (Fault.truncatedBody(fraction: 0.6), .truncated),
    ])
    func nothingInvalidStored(fault: Fault, reason: ImageCoreError.Reason) async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin({ $0.faults = [FaultRule(pathContains: "", fault: fault)] }) { origin in
                let url = urls(origin, count: 1)[0]
                let pipeline = pipeline(directory)
                let error = await #expect(throws: ImageCoreError.self) { try await pipeline.image(for: url) }
                #expect(error?.reason == reason)
                #expect(error?.subject == url)
                #expect(await pipeline.diskCache?.count == 0 && pipeline.memoryCache.count == 0)
                #expect(await pipeline.diskCache?.entry(for: url) == nil)
                #expect(pipeline.statistics.snapshot.failures[reason.rawValue] == 1)
            }
        }
    }

    @Test("a real JPEG served as text/plain is stored, with a warning")
    func contentTypeMismatch() async throws {
        try await withOrigin({ $0.faults = [FaultRule(pathContains: "", fault: .contentType("text/plain"))] }) { origin in
            let response = try await pipeline(nil).image(for: urls(origin, count: 1)[0])
            #expect(response.outcome == .networkFetch)
            #expect(response.warnings.contains { $0.contains("content-type mismatch") })
        }
    }

    @Test("a damaged disk entry is removed and the image fetched again")
    func damagedDiskEntry() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let url = urls(origin, count: 1)[0]
                let first = pipeline(directory)
                _ = try await first.image(for: url)
                let path = try #require(first.diskCache).path(for: url)
                var file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
                file[file.count - 10] ^= 0xFF
                try Data(file).write(to: URL(fileURLWithPath: path))
                let second = pipeline(directory)
                #expect(try await second.image(for: url).outcome == .networkFetch)
                #expect(second.diskCache?.statistics.damagedRemoved == 1)
                #expect(await pipeline(directory).diskCache?.entry(for: url) != nil)
            }
        }
    }

    @Test("the catalogue's full-size URLs: 90 and up and the cesium spelling are 404s")
    func expectedMissing() async throws {
        try await withOrigin { origin in
            let builder = origin.urlBuilder
            let catalogue = ElementCatalogue.standard
            let pipeline = pipeline(nil)
            let thorium = await pipeline.prefetch([builder.fullImageURL(for: catalogue.element(number: 90)!),
                                                   builder.fullImageURL(for: catalogue.element(number: 55)!),
                                                   origin.imagesBase + "/caesium.jpg"])
            #expect(thorium.results[0].error?.httpStatus == 404)
            #expect(thorium.results[1].error?.httpStatus == 404)
            #expect(thorium.results[2].outcome == .networkFetch)
        }
    }

    @Test("a URL the host lacks is served by its first alternative that exists; remembered on disk; forgotten when it stops working")
    func alternatives() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let cesium = origin.imagesBase + "/cesium.jpg", caesium = origin.imagesBase + "/caesium.jpg"
                let alternatives = [origin.imagesBase + "/nothing.jpg", caesium]
                let first = pipeline(directory)
                let found = try await first.image(for: cesium, alternatives: alternatives)
                #expect(found.servedBy == caesium && found.outcome == .networkFetch && found.url == cesium)
                #expect(first.statistics.snapshot.failed == 0)  // the probes are not failures of the request
                #expect(await first.diskCache?.alias(for: cesium) == caesium)
                #expect(try await first.image(for: cesium, alternatives: alternatives).outcome == .memoryHit)
                let requests = origin.statistics.requests
                let restarted = pipeline(directory)  // a new process: the alias and the bytes come from disk
                let again = try await restarted.image(for: cesium, alternatives: alternatives)
                #expect(again.outcome == .diskHit && again.servedBy == caesium && origin.statistics.requests == requests)
                #expect(try await restarted.image(for: ImageRequest(url: cesium, alternatives: alternatives)).servedBy == caesium)
                // Without alternatives a URL is only itself.
                await #expect(throws: ImageCoreError.self) { try await restarted.image(for: cesium) }
                // When no spelling works, the error names the ones tried; a dead alias is forgotten.
                try await restarted.diskCache?.rememberAlias(origin.imagesBase + "/gone.jpg", for: origin.imagesBase + "/x.jpg")
                do {
                    _ = try await pipeline(directory).image(for: origin.imagesBase + "/x.jpg", alternatives: [origin.imagesBase + "/y.jpg"])
                    Issue.record("expected a 404")
                } catch let error as ImageCoreError {
                    #expect(error.httpStatus == 404 && error.message.contains("y.jpg"))
                }
                #expect(await restarted.diskCache?.alias(for: origin.imagesBase + "/x.jpg") == nil)
                try await restarted.diskCache?.removeAll()
                #expect(await restarted.diskCache?.alias(for: cesium) == nil)  // `tilecache clear` forgets aliases too
            }
        }
    }

    @Test("an alternative that fails other than by 404 is the answer: the image may be there, so no 404 and no alias")
    func alternativeFailure() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin({ $0.faults = [FaultRule(pathContains: "/caesium.jpg", fault: .status(503))] }) { origin in
                let configured = pipeline(directory)
                do {
                    _ = try await configured.image(for: origin.imagesBase + "/cesium.jpg", alternatives: [origin.imagesBase + "/caesium.jpg"])
                    Issue.record("expected a failure")
                } catch let error as ImageCoreError {
                    #expect(error.httpStatus == 503 && error.subject.hasSuffix("/caesium.jpg"), "\(error)")
                }
                #expect(await configured.diskCache?.alias(for: origin.imagesBase + "/cesium.jpg") == nil)
            }
        }
    }

    @Test("a disk cache directory that cannot be used degrades to memory only")
    func unusableDiskCache() async throws {
        try await withOrigin { origin in
            let pipeline = pipeline("/dev/null/cache")
            #expect(pipeline.diskCache == nil)
            let response = try await pipeline.image(for: urls(origin, count: 1)[0])
            #expect(response.outcome == .networkFetch)
        }
    }
}

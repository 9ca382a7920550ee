import Catalogue
import Foundation
import ImageCore
@testable import SharedStore
import Testing
import TestSupport
import TileCacheOrigin

/// The shared tier against a real SeaweedFS on loopback (S3 API, signed by libcurl), never a mock: what a second
/// instance reads, what a damaged object does, and what an unreachable or misconfigured store does.
@Suite("Shared tier on a real S3 store (SeaweedFS)", .timeLimit(.minutes(5)), .heavy)
struct SharedTierTests {
    func pipeline(_ directory: String?, store: SharedStoreConfiguration?) -> ImagePipeline {
        var configuration = ImagePipeline.Configuration()
        configuration.diskDirectory = directory
        configuration.memoryCountLimit = 1000
        configuration.memoryCostLimit = 256 << 20
        configuration.downloader = .testing()
        configuration.sharedStore = store
        return ImagePipeline(configuration: configuration)
    }

    func urls(_ origin: OriginServer, count: Int) -> [String] {
        origin.urlBuilder.images(for: Array(ElementCatalogue.standard.elements.prefix(count))).map(\.url)
    }

    /// A fresh bucket for one test.
    func bucket(_ store: SeaweedFS) async throws -> SharedStoreConfiguration {
        let configuration = try store.store("s3://tc-\(UUID().uuidString.prefix(8).lowercased())/fleet")
        try await pipeline(nil, store: configuration).sharedTier!.checkBucket(createBucket: true)
        return configuration
    }

    @Test("a second instance with empty caches gets every image and variant from the store: no origin request, no resize")
    func secondInstance() async throws {
        let store = try await SeaweedFS.shared()
        let shared = try await bucket(store)
        try await withOrigin { origin in
            let urls = urls(origin, count: 6)
            let first = pipeline(try makeTemporaryDirectory(), store: shared)
            let cold = await first.prefetch(urls)
            #expect(cold.report.networkFetches == urls.count && cold.report.failed == 0)
            let variant = try await first.image(for: ImageRequest(url: urls[0], processing: ImageProcessing(width: 32)))
            #expect(variant.processed)
            await first.sharedTier!.drain()
            let written = first.sharedTier!.statistics
            #expect(written.writes == urls.count + 1 && written.writesFailed == 0 && written.writesDropped == 0)
            #expect(try await first.sharedTier!.summary().objects == urls.count + 1)
            let originRequests = origin.statistics.requests

            let secondDisk = try makeTemporaryDirectory()
            let second = pipeline(secondDisk, store: shared)
            let warm = await second.prefetch(urls)
            #expect(warm.report.sharedHits == urls.count && warm.report.hitRate == 1)
            #expect(warm.results.allSatisfy { $0.outcome == .sharedHit })
            let sameVariant = try await second.image(for: ImageRequest(url: urls[0], processing: ImageProcessing(width: 32)))
            #expect(sameVariant.outcome == .sharedHit && !sameVariant.processed)
            #expect(sameVariant.bytes == variant.bytes && sameVariant.validators == variant.validators)
            #expect(origin.statistics.requests == originRequests)
            // A shared hit was written to the second instance's disk: a third instance on that disk needs no store.
            let third = pipeline(secondDisk, store: nil)
            #expect(await third.prefetch(urls).report.diskHits == urls.count)
        }
    }

    @Test("open-source variants (AVIF, smart crop, thumbor's crop with flips and fill, imgproxy's crop and extend, placeholders) go through the store: a second instance gets each as a shared hit, byte for byte")
    func openSourceVariants() async throws {
        let store = try await SeaweedFS.shared()
        let shared = try await bucket(store)
        try await withOrigin { origin in
            let url = try #require(urls(origin, count: 79).last)  // gold's photo or tile: whichever the builder lists last
            var thumbor = ImageProcessing(width: 120, height: 80, fit: .cover, enlarge: true, format: .png)
            thumbor.cropRule = .thumbor
            thumbor.sourceCrop = .init(left: 4, top: 4, right: 100, bottom: 90)
            (thumbor.flipHorizontal, thumbor.canvas) = (true, .color(.init(red: 0, green: 128, blue: 255)))
            var imgproxy = ImageProcessing(width: 300, height: 300, format: .webp)
            imgproxy.regionCrop = .init(width: 0.5, height: 0.5, gravity: .init(.southEast))
            (imgproxy.extend, imgproxy.background, imgproxy.minWidth) = (.init(.north), .init(red: 255, green: 0, blue: 0), 40)
            let variants = [ImageProcessing(width: 64, format: .avif),
                            ImageProcessing(width: 48, height: 48, fit: .cover, gravity: .init(.smart)), thumbor, imgproxy,
                            .placeholder(of: .none), .placeholder(of: thumbor)]
            let first = pipeline(try makeTemporaryDirectory(), store: shared)
            var made: [ImageResponse] = []
            for processing in variants {
                let image = try await first.image(for: ImageRequest(url: url, processing: processing))
                #expect(image.processed)
                made.append(image)
            }
            await first.sharedTier!.drain()
            #expect(first.sharedTier!.statistics.writes == variants.count + 1 && first.sharedTier!.statistics.writesFailed == 0)
            let requests = origin.statistics.requests
            let second = pipeline(try makeTemporaryDirectory(), store: shared)
            for (processing, firstImage) in zip(variants, made) {
                let image = try await second.image(for: ImageRequest(url: url, processing: processing))
                #expect(image.outcome == .sharedHit && !image.processed && image.bytes == firstImage.bytes && image.bytes != nil,
                        "\(processing.canonicalQuery)")
            }
            #expect(origin.statistics.requests == requests)
        }
    }

    @Test("a variant of a photo served under another spelling is found by an instance that has not learnt the alias")
    func aliasedVariant() async throws {
        let store = try await SeaweedFS.shared()
        let shared = try await bucket(store)
        try await withOrigin { origin in
            // The origin has caesium.jpg, not cesium.jpg (the catalogue's name for element 55).
            let cesium = try #require(ElementCatalogue.standard.element(number: 55))
            let photo = try #require(origin.urlBuilder.images(for: [cesium]).first { $0.kind == .full })
            #expect(!photo.alternativeURLs.isEmpty)
            let request = ImageRequest(url: photo.url, alternatives: photo.alternativeURLs, processing: ImageProcessing(width: 32))
            let first = pipeline(try makeTemporaryDirectory(), store: shared)
            #expect(try await first.image(for: request).processed)
            await first.sharedTier!.drain()
            let requests = origin.statistics.requests
            let second = pipeline(try makeTemporaryDirectory(), store: shared)
            let again = try await second.image(for: request)
            #expect(again.outcome == .sharedHit && !again.processed)
            #expect(origin.statistics.requests == requests, "no origin request, not even the 404 of the other spelling")
        }
    }

    @Test("an object whose bytes do not match its SHA-256 is a miss, counted, and replaced by the next fetch")
    func damagedObject() async throws {
        let store = try await SeaweedFS.shared()
        let shared = try await bucket(store)
        try await withOrigin { origin in
            let url = urls(origin, count: 1)[0]
            let first = pipeline(nil, store: shared)
            let original = try await first.image(for: url)
            await first.sharedTier!.drain()
            // Overwrite the object's bytes, keeping its metadata (and so its recorded SHA-256).
            let name = ImageKey(url: url).sharedObjectName
            let client = first.sharedTier!.client
            let object = try #require(try await client.object(client.key(name)))
            var damaged = object.bytes
            damaged[damaged.count / 2] ^= 0xFF
            let metadata = try #require(SharedTier.metadata(from: object.headers, bytes: object.bytes))
            try await client.put(client.key(name), bytes: damaged, contentType: "image/jpeg", metadata: SharedTier.headers(for: metadata))

            let second = pipeline(nil, store: shared)
            let refetched = try await second.image(for: url)
            #expect(refetched.outcome == .networkFetch && refetched.bytes == original.bytes)
            await second.sharedTier!.drain()
            #expect(second.sharedTier!.statistics.corrupt == 1)
            let third = pipeline(nil, store: shared)
            #expect(try await third.image(for: url).outcome == .sharedHit)
        }
    }

    @Test("an unreachable store never fails an image: the circuit opens after 3 failures, health is degraded")
    func unreachableStore() async throws {
        // A port with nothing listening: every request is refused.
        var environment = try await SeaweedFS.shared().environment
        environment[SharedStoreConfiguration.Variable.endpoint] = "http://127.0.0.1:9"
        var shared = try SharedStoreConfiguration(storeURL: "s3://nowhere", endpoint: nil, environment: environment)
        shared.probeInterval = .seconds(60)
        try await withOrigin { origin in
            let urls = urls(origin, count: 8)
            let instance = pipeline(nil, store: shared)
            for url in urls {
                let outcome = try await instance.image(for: url).outcome
                #expect(outcome == .networkFetch)
            }
            await instance.sharedTier!.drain()
            let statistics = instance.sharedTier!.statistics
            // Three requests (lookups and background writes, in whatever order they ran) failed and opened the circuit;
            // only requests already under way then were still sent.
            #expect(statistics.requests >= 3 && statistics.requests < urls.count && statistics.circuitOpened == 1)
            #expect(statistics.errors == ["connect": statistics.requests])
            #expect(statistics.skipped + statistics.writesDropped > 0 && statistics.writes == 0)
            #expect(instance.sharedTier!.health.status == .degraded)
        }
    }

    @Test("a store that does not answer at start starts degraded, and is used as soon as a probe succeeds")
    func recovers() async throws {
        // Reserve a free port, then start a store on it only after the tier has found it down.
        let port = try freePort()
        var environment = try await SeaweedFS.shared().environment
        environment[SharedStoreConfiguration.Variable.endpoint] = "http://127.0.0.1:\(port)"
        var shared = try SharedStoreConfiguration(storeURL: "s3://recovers", endpoint: nil, environment: environment)
        shared.probeInterval = .milliseconds(300)
        let instance = pipeline(nil, store: shared)
        try await instance.sharedTier!.checkBucket(createBucket: true)
        #expect(instance.sharedTier!.health.status == .degraded)
        let late = try await SeaweedFS.start(port: port)
        try await waitUntil("the shared tier is healthy once the store is up", within: .seconds(20)) {
            instance.sharedTier!.health.status == .ok
        }
        await late.stop()
    }

    @Test("misconfiguration is an error naming the store and endpoint: missing bucket, wrong credentials, malformed endpoint")
    func misconfiguration() async throws {
        let store = try await SeaweedFS.shared()
        let missing = try store.store("s3://no-such-bucket-\(UUID().uuidString.prefix(6).lowercased())")
        do throws(SharedStoreError) {
            try await pipeline(nil, store: missing).sharedTier!.checkBucket()
            Issue.record("a missing bucket was accepted")
        } catch {
            #expect(error.kind == .bucketMissing && error.description.contains(store.endpoint) && error.description.contains("--create-bucket"))
        }
        let shared = try await bucket(store)
        var wrong = store.environment
        wrong[SharedStoreConfiguration.Variable.secretAccessKey] = "not-the-secret"
        let forbidden = try SharedStoreConfiguration(storeURL: shared.storeURL, endpoint: nil, environment: wrong)
        do throws(SharedStoreError) {
            try await pipeline(nil, store: forbidden).sharedTier!.checkBucket()
            Issue.record("wrong credentials were accepted")
        } catch {
            #expect(error.kind == .forbidden && error.description.contains(shared.storeURL))
            #expect(!error.description.contains("not-the-secret"))
        }
        for endpoint in ["127.0.0.1:8333", "ftp://127.0.0.1", "http://127.0.0.1:8333/path", "http://:8333", "http://127.0.0.1:99999"] {
            #expect(throws: SharedStoreError.self, "\(endpoint)") {
                try SharedStoreConfiguration(storeURL: "s3://bucket", endpoint: endpoint, environment: store.environment)
            }
        }
        for url in ["s3://", "s3://UPPER", "s3://ab", "http://bucket", "s3://bucket/with space"] {
            #expect(throws: SharedStoreError.self, "\(url)") {
                try SharedStoreConfiguration(storeURL: url, endpoint: store.endpoint, environment: store.environment)
            }
        }
        #expect(throws: SharedStoreError.self) {
            try SharedStoreConfiguration(storeURL: "s3://bucket", endpoint: store.endpoint, environment: [:])
        }
        let signing = try store.store("s3://bucket").signing
        #expect(!"\(signing)".contains(SeaweedFS.secretAccessKey))
    }

    @Test("ListObjectsV2's query is sorted and percent-encoded: a prefix with '/' and a continuation token sign correctly")
    func listing() async throws {
        let store = try await SeaweedFS.shared()
        let shared = try await bucket(store)
        let tier = pipeline(nil, store: shared).sharedTier!
        for index in 0..<3 {
            try await tier.client.put(tier.client.key("objects/aa/\(index)"), bytes: [UInt8](repeating: UInt8(index), count: 10 + index),
                                      contentType: "application/octet-stream", metadata: [])
        }
        let summary = try await tier.summary()
        #expect(summary.objects == 3 && summary.bytes == 33)
        #expect(tier.client.url(query: [("prefix", "a b/"), ("list-type", "2")]).hasSuffix("?list-type=2&prefix=a%20b%2F"))
    }

    /// A free loopback port whose gRPC twin (port + 10000, which weed also binds) is free too.
    private func freePort() throws -> Int {
        // Below the ephemeral range (32768-60999) with its gRPC twin: an outgoing connection of another test cannot take
        // it before the store binds it (it did with 30000-39000: weed exited).
        for _ in 0..<500 {
            let port = Int.random(in: 12000..<22700)
            if canBind(port) && canBind(port + 10000) { return port }
        }
        throw TestFailure("no free port pair in 12000-32700")
    }

    private func canBind(_ port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}

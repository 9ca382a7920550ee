import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ImageCore
import SharedStore
import Logging
import Testing
import TestSupport
import TileCacheOrigin
import TileCacheService

/// Two service instances over one real S3 store (SeaweedFS), and one over a store that does not answer.
@Suite("Service: the shared tier", .timeLimit(.minutes(5)), .heavy)
struct SharedStoreServiceTests {
    static let source = HTTPField.Name("X-TileCache-Source")!

    @Test("a second instance serves an image and a variant from the store (sharedHit), and says so in stats and metrics")
    func secondInstance() async throws {
        let store = try await SeaweedFS.shared()
        let shared = try store.store("s3://svc-\(UUID().uuidString.prefix(8).lowercased())/fleet")
        let harness = try await ServiceHarness.start { $0.pipeline.sharedStore = shared }
        try await withService(harness) { client, dependencies in
            try await dependencies.pipeline.sharedTier!.checkBucket(createBucket: true)
            let image = try await client.execute(uri: "/api/v1/elements/1/thumbnail", method: .get)
            let variant = try await client.execute(uri: "/api/v1/elements/1/thumbnail?w=64", method: .get)
            // A negotiated WebP cover crop: every option and the format are part of the stored variant's name.
            let webp = try await client.execute(uri: "/api/v1/elements/1/thumbnail?w=48&h=48&fit=cover", method: .get,
                                                headers: [.accept: "image/webp,*/*"])
            #expect(image.status == .ok && image.headers[Self.source] == "networkFetch")
            #expect(variant.status == .ok && webp.status == .ok && webp.headers[.contentType] == "image/webp")
            await dependencies.pipeline.sharedTier!.drain()
            let originRequests = harness.origin.statistics.requests

            // Another instance: same origin and store, its own empty disk.
            var second = harness.configuration
            second.pipeline.diskDirectory = harness.directory + "/second-cache"
            second.database = .sqlite(path: harness.directory + "/second.sqlite")
            let secondDependencies = try ServiceDependencies(configuration: second, logger: Logger(label: "test"))
            try await secondDependencies.pipeline.sharedTier!.checkBucket()
            try await buildApplication(secondDependencies, logger: Logger(label: "test")).test(.ahc(.http)) { other in
                let sharedImage = try await other.execute(uri: "/api/v1/elements/1/thumbnail", method: .get)
                let sharedVariant = try await other.execute(uri: "/api/v1/elements/1/thumbnail?w=64", method: .get)
                #expect(sharedImage.headers[Self.source] == "sharedHit" && sharedImage.bytes == image.bytes)
                #expect(sharedImage.headers[.eTag] == image.headers[.eTag])
                #expect(sharedVariant.headers[Self.source] == "sharedHit" && sharedVariant.bytes == variant.bytes)
                let sharedWebP = try await other.execute(uri: "/api/v1/elements/1/thumbnail?w=48&h=48&fit=cover", method: .get,
                                                         headers: [.accept: "image/webp,*/*"])
                #expect(sharedWebP.headers[Self.source] == "sharedHit" && sharedWebP.bytes == webp.bytes)
                #expect(sharedWebP.headers[.contentType] == "image/webp" && sharedWebP.headers[.eTag] == webp.headers[.eTag])
                #expect(sharedWebP.headers[.vary] == "Accept")
                #expect(harness.origin.statistics.requests == originRequests)

                let stats = try await other.execute(uri: "/api/v1/stats", method: .get).decoded(as: ServiceJSON.Stats.self)
                let sharedStats = try #require(stats.sharedStore)
                #expect(sharedStats.hits == 3 && sharedStats.misses == 0)
                let metrics = String(buffer: try await other.execute(uri: "/metrics", method: .get).body)
                #expect(metrics.contains("tilecache_shared_store_up 1\n"))
                #expect(metrics.contains(#"tilecache_shared_store_reads_total{result="hit"} 3"#), "\(metrics)")
                let health = try await other.execute(uri: "/healthz", method: .get)
                #expect(health.status == .ok)
                let healthBody = try health.decoded(as: ServiceJSON.Health.self)
                #expect(healthBody.status == "ok")
                #expect(healthBody.sharedStore?.status == "ok")
            }
        }
    }

    @Test("a store that does not answer: images are still served, /healthz is 200 'degraded' naming the store, metrics say down")
    func degraded() async throws {
        var environment = try await SeaweedFS.shared().environment
        environment[SharedStoreConfiguration.Variable.endpoint] = "http://127.0.0.1:9"
        let shared = try SharedStoreConfiguration(storeURL: "s3://down/fleet", endpoint: nil, environment: environment)
        let harness = try await ServiceHarness.start { $0.pipeline.sharedStore = shared }
        try await withService(harness) { client, dependencies in
            try await dependencies.pipeline.sharedTier!.checkBucket()
            for number in 1...4 {
                let image = try await client.execute(uri: "/api/v1/elements/\(number)/thumbnail", method: .get)
                #expect(image.status == .ok && image.headers[Self.source] == "networkFetch")
            }
            let health = try await client.execute(uri: "/healthz", method: .get)
            #expect(health.status == .ok)
            let healthBody = try health.decoded(as: ServiceJSON.Health.self)
            #expect(healthBody.status == "degraded")
            let sharedHealth = try #require(healthBody.sharedStore)
            #expect(sharedHealth.status == "degraded" && sharedHealth.store == "s3://down/fleet")
            #expect(sharedHealth.endpoint == "http://127.0.0.1:9" && sharedHealth.reason != nil && sharedHealth.since != nil)
            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(metrics.contains("tilecache_shared_store_up 0\n"))
            #expect(!metrics.contains("tilecache_shared_store_writes_total{result=\"ok\"} 1"))
        }
    }
}

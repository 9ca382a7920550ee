import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ImageCore
import Testing
import TileCacheFixtures
import TileCacheOrigin
import TileCacheService

@Suite("Service: catalogue and images")
struct ElementsEndpointTests {
    @Test("the catalogue in the seed API's shape, with image URLs pointing at the service")
    func catalogue() async throws {
        try await withService(try await .start()) { client, _ in
            try await client.execute(uri: "/api/v1/elements", method: .get) { response in
                #expect(response.status == .ok)
                let elements = try #require(response.json?["elements"] as? [[String: Any]])
                #expect(elements.count == 118)
                let sodium = elements[10]
                for key in ["name", "symbol", "number", "atomic_mass", "category", "period", "phase", "melt", "boil",
                            "discovered_by", "xpos", "ypos", "thumbnail_url", "image_url"] {
                    #expect(sodium.keys.contains(key), "missing \(key)")
                }
                #expect(sodium["name"] as? String == "Sodium" && sodium["atomic_mass"] as? Double == 22.989769282)
                #expect((sodium["thumbnail_url"] as? String)?.hasSuffix("/api/v1/elements/11/thumbnail") == true)
                #expect((sodium["image_url"] as? String)?.hasSuffix("/api/v1/elements/11/image") == true)
            }
            for id in ["26", "fe", "IRON"] {
                try await client.execute(uri: "/api/v1/elements/\(id)", method: .get) { response in
                    #expect(response.status == .ok && response.json?["symbol"] as? String == "Fe")
                }
            }
            try await client.execute(uri: "/api/v1/elements/unobtainium", method: .get) { response in
                #expect(response.status == .notFound && response.errorReason == "unknown-element")
                #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            }
        }
    }

    @Test("thumbnails: the origin's bytes, validators, then served from memory; 304s; HEAD")
    func thumbnail() async throws {
        let harness = try await ServiceHarness.start()
        let expected = harness.origin.body(forPath: "/periodictable/Tiles/026/s7.JPG")
        try await withService(harness) { client, _ in
            let first = try await client.execute(uri: "/api/v1/elements/26/thumbnail", method: .get)
            #expect(first.status == .ok && first.bytes == expected)
            #expect(first.headers[.contentType] == "image/jpeg")
            #expect(first.headers[.cacheControl] == "public, max-age=86400")
            let etag = try #require(first.headers[.eTag])
            let lastModified = try #require(first.headers[.lastModified])
            let second = try await client.execute(uri: "/api/v1/elements/Fe/thumbnail", method: .get)
            #expect(second.bytes == expected && second.headers[HTTPField.Name("X-TileCache-Source")!] == "memory")
            let notModified = try await client.execute(uri: "/api/v1/elements/26/thumbnail", method: .get, headers: [.ifNoneMatch: etag])
            #expect(notModified.status == .notModified && notModified.body.readableBytes == 0 && notModified.headers[.eTag] == etag)
            let byDate = try await client.execute(uri: "/api/v1/elements/26/thumbnail", method: .get, headers: [.ifModifiedSince: lastModified])
            #expect(byDate.status == .notModified)
            let changed = try await client.execute(uri: "/api/v1/elements/26/thumbnail", method: .get, headers: [.ifNoneMatch: "\"other\""])
            #expect(changed.status == .ok)
            let head = try await client.execute(uri: "/api/v1/elements/26/thumbnail", method: .head)
            #expect(head.status == .ok && head.body.readableBytes == 0 && head.headers[.contentLength] == String(expected?.count ?? -1))
            #expect(harness.origin.statistics.requests == 1)
        }
    }

    @Test("?w=N gives a JPEG exactly N wide, cached as its own entry; bad widths and unknown parameters are 400")
    func resize() async throws {
        try await withService(try await .start()) { client, _ in
            let resized = try await client.execute(uri: "/api/v1/elements/79/image?w=128", method: .get)
            #expect(resized.status == .ok && resized.headers[.contentType] == "image/jpeg")
            let header = try ImageInspector().inspectHeader(resized.bytes, subject: "resized")
            #expect(header.width == 128)
            let again = try await client.execute(uri: "/api/v1/elements/79/image?w=128", method: .get)
            #expect(again.headers[HTTPField.Name("X-TileCache-Source")!] == "memory" && again.headers[.eTag] == resized.headers[.eTag])
            let original = try await client.execute(uri: "/api/v1/elements/79/image", method: .get)
            #expect(original.headers[.eTag] != resized.headers[.eTag])
            let small = try await client.execute(uri: "/api/v1/elements/1/thumbnail?w=16", method: .get)
            #expect(try ImageInspector().inspectHeader(small.bytes, subject: "small").width == 16)
            for query in ["w=15", "w=1025", "w=abc", "w=", "width=64", "w=64&x=1"] {
                let bad = try await client.execute(uri: "/api/v1/elements/79/image?\(query)", method: .get)
                #expect(bad.status == .badRequest, "\(query)")
                #expect(bad.errorReason == "bad-width" || bad.errorReason == "unknown-parameter")
            }
        }
    }

    @Test("no photo for 90 and up, and upstream 404s, are 404 JSON errors")
    func notFound() async throws {
        let harness = try await ServiceHarness.start()
        try await withService(harness) { client, _ in
            let thorium = try await client.execute(uri: "/api/v1/elements/90/image", method: .get)
            #expect(thorium.status == .notFound && thorium.errorReason == "no-photo")
            #expect(harness.origin.statistics.requests == 0)  // known missing: never asked upstream
            let cesium = try await client.execute(uri: "/api/v1/elements/Cs/image", method: .get)
            #expect(cesium.status == .notFound && cesium.errorReason == "upstream-not-found")
            #expect(cesium.json.map { "\($0)" }?.contains("127.0.0.1") == false)  // no upstream details in the body
        }
    }

    @Test("a client waits at most the request timeout, even while upstream retries")
    func requestTimeout() async throws {
        var origin = OriginServer.Configuration()
        origin.faults = [FaultRule(pathContains: "/Tiles/", fault: .noResponse)]
        let harness = try await ServiceHarness.start(origin: origin) { $0.requestTimeout = TestTime.scaled(.milliseconds(300)) }
        try await withService(harness) { client, _ in
            let response = try await client.execute(uri: "/api/v1/elements/1/thumbnail", method: .get)
            #expect(response.status == .gatewayTimeout && response.errorReason == "timeout")
        }
    }

    @Test("upstream trouble maps to 502 or 504 and is never cached as an image", arguments: [
        (Fault.htmlPage, 502, "upstream-not-an-image"), (Fault.status(500), 502, "upstream-http-status"),
        (Fault.resetMidBody, 502, "upstream-connect"), (Fault.hugeDimensions, 502, "upstream-dimensions"),
        (Fault.noResponse, 504, "upstream-timeout"),
    ])
    func upstreamFaults(fault: Fault, status: Int, reason: String) async throws {
        var origin = OriginServer.Configuration()
        origin.faults = [FaultRule(pathContains: "/Tiles/", fault: fault)]
        let harness = try await ServiceHarness.start(origin: origin) {
            $0.pipeline.downloader.retryPolicy = RetryPolicy(maxAttempts: 1)
            $0.pipeline.downloader.transferOptions.totalTimeout = TestTime.scaled(.milliseconds(500))
        }
        try await withService(harness) { client, dependencies in
            let response = try await client.execute(uri: "/api/v1/elements/1/thumbnail", method: .get)
            #expect(Int(response.status.code) == status && response.errorReason == reason)
            #expect(response.headers[.cacheControl] == "no-store")
            harness.origin.setFaults([])
            let recovered = try await client.execute(uri: "/api/v1/elements/1/thumbnail", method: .get)
            #expect(recovered.status == .ok && ImageFormat.sniff(recovered.bytes) == .jpeg)
            #expect(dependencies.pipeline.diskCache?.count == 1)
        }
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ImageCore
import Testing
import TestSupport
import TileCacheOrigin
import TileCacheService
import Catalogue

@Suite("Service: catalogue and images", .timeLimit(.minutes(5)), .heavy)
struct ElementsEndpointTests {
    @Test("the catalogue in the seed API's shape: bare arrays of 100 and 18, image URLs pointing at the service")
    func catalogue() async throws {
        try await withService(try await .start()) { client, _ in
            try await client.execute(uri: "/api/v1/elements", method: .get) { response in
                #expect(response.status == .ok && response.headers[HTTPField.Name("X-Total-Count")!] == "100")
                let elements = try response.decoded(as: [ServiceJSON.Element].self)
                #expect(elements.map(\.number) == Array(1...100))
                let sodium = elements[10]
                #expect(sodium.name == "Sodium" && sodium.atomicMass == 22.989769282 && sodium.id == "11")
                #expect(sodium.thumbnailURL.hasSuffix("/api/v1/elements/11/thumbnail"))
                #expect(sodium.imageURL.hasSuffix("/api/v1/elements/11/image"))
            }
            let remaining = try await client.execute(uri: "/api/v1/elements_remaining", method: .get).decoded(as: [ServiceJSON.Element].self)
            #expect(remaining.map(\.number) == Array(101...118) && remaining.allSatisfy { !$0.hasImage })
            for id in ["26", "fe", "IRON"] {
                let response = try await client.execute(uri: "/api/v1/elements/\(id)", method: .get)
                #expect(response.status == .ok)
                #expect(try response.decoded(as: ServiceJSON.Element.self).symbol == "Fe", "\(id)")
            }
            for (id, symbol) in [("caesium", "Cs"), ("sulphur", "S"), ("aluminum", "Al")] {
                #expect(try await client.execute(uri: "/api/v1/elements/\(id)", method: .get).decoded(as: ServiceJSON.Element.self).symbol == symbol, "\(id)")
            }
            try await client.execute(uri: "/api/v1/elements/unobtainium", method: .get) { response in
                #expect(response.status == .notFound && response.errorReason == "unknown-element")
                #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
            }
        }
    }

    @Test("list queries as the mock API has them: page and limit, sortBy and order, search, filters; unknown keys ignored")
    func listQueries() async throws {
        try await withService(try await .start()) { client, _ in
            func numbers(_ query: String, _ route: String = "/api/v1/elements") async throws -> [Int] {
                let response = try await client.execute(uri: "\(route)?\(query)", method: .get)
                #expect(response.status == .ok, "\(query)")
                return try response.decoded(as: [ServiceJSON.Element].self).map(\.number)
            }
            #expect(try await numbers("page=2&limit=10") == Array(11...20))
            #expect(try await numbers("page=11&limit=10").isEmpty)
            #expect(try await numbers("limit=3") == [1, 2, 3])
            #expect(try await numbers("page=2&limit=9223372036854775807").isEmpty)  // no overflow
            #expect(try await numbers("page=9223372036854775807&limit=2").isEmpty)
            #expect(try await numbers("limit=9223372036854775807") == Array(1...100))
            #expect(try await numbers("sortBy=atomic_mass&order=desc&limit=2") == [100, 99])
            #expect(try await numbers("sortBy=name&limit=3") == [89, 13, 95])
            #expect(try await numbers("symbol=Na") == [11])
            #expect(try await numbers("phase=Gas&period=2") == [7, 8, 9, 10])
            // search: a case-insensitive substring of any string field (summaries included).
            let every = try await client.execute(uri: "/api/v1/elements", method: .get).decoded(as: [ServiceJSON.Element].self)
            let nobleGas = every.filter { $0.strings.contains { $0.lowercased().contains("noble gas") } }.map(\.number)
            #expect(try await numbers("search=NOBLE%20gas") == nobleGas && [2, 10, 18].allSatisfy(nobleGas.contains) && !nobleGas.contains(26))
            #expect(try await numbers("symbol=Og", "/api/v1/elements_remaining") == [118])
            #expect(try await numbers("utm_source=x&_=123&symbol=Fe") == [26])  // unknown keys are ignored
            let total = try await client.execute(uri: "/api/v1/elements?phase=Liquid&limit=1", method: .get)
            #expect(total.headers[HTTPField.Name("X-Total-Count")!] == "2")
            #expect(try total.decoded(as: [ServiceJSON.Element].self).count == 1)
            for (query, reason) in [("page=0", "bad-page"), ("limit=x", "bad-limit"), ("order=up", "bad-order"), ("sortBy=weight", "bad-sortBy")] {
                let bad = try await client.execute(uri: "/api/v1/elements?\(query)", method: .get)
                #expect(bad.status == .badRequest && bad.errorReason == reason, "\(query)")
            }
        }
    }

    @Test("every error is JSON: unknown routes are 404, other methods 405 with Allow")
    func routeErrors() async throws {
        try await withService(try await .start()) { client, _ in
            let missing = try await client.execute(uri: "/api/v2/nothing", method: .get)
            #expect(missing.status == .notFound && missing.errorReason == "no-route" && missing.headers[.contentType]?.hasPrefix("application/json") == true)
            for (uri, method, allow) in [("/api/v1/elements", HTTPRequest.Method.post, "GET, HEAD"),
                                         ("/api/v1/favorites", .delete, "GET, HEAD, POST"),
                                         ("/api/v1/favorites/1", .patch, "GET, HEAD, PUT, DELETE"),
                                         ("/iron.jpg", .put, "GET, HEAD")] {
                let response = try await client.execute(uri: uri, method: method)
                #expect(response.status == .methodNotAllowed && response.headers[.allow] == allow, "\(method) \(uri)")
                #expect(response.errorReason == "method-not-allowed")
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

    @Test("?w=N gives a JPEG N wide, cached as its own entry; bad widths and unknown parameters are 400")
    func resize() async throws {
        try await withService(try await .start()) { client, _ in
            let resized = try await client.execute(uri: "/api/v1/elements/79/image?w=128", method: .get)
            #expect(resized.status == .ok && resized.headers[.contentType] == "image/jpeg")
            #expect(resized.headers[HTTPField.Name("X-TileCache-Source")!] == "resized")
            // Made from an original already in memory, a new variant is still `resized`, not `memory`.
            let fromMemory = try await client.execute(uri: "/api/v1/elements/79/image?w=96", method: .get)
            #expect(fromMemory.headers[HTTPField.Name("X-TileCache-Source")!] == "resized")
            let header = try ImageInspector().inspectHeader(resized.bytes, subject: "resized")
            #expect(header.width == 128)
            let again = try await client.execute(uri: "/api/v1/elements/79/image?w=128", method: .get)
            #expect(again.headers[HTTPField.Name("X-TileCache-Source")!] == "memory" && again.headers[.eTag] == resized.headers[.eTag])
            let original = try await client.execute(uri: "/api/v1/elements/79/image", method: .get)
            #expect(original.headers[.eTag] != resized.headers[.eTag])
            let small = try await client.execute(uri: "/api/v1/elements/1/thumbnail?w=16", method: .get)
            #expect(try ImageInspector().inspectHeader(small.bytes, subject: "small").width == 16)
            for query in ["w=0", "w=4097", "w=abc", "w=", "width=64", "w=64&x=1"] {
                let bad = try await client.execute(uri: "/api/v1/elements/79/image?\(query)", method: .get)
                #expect(bad.status == .badRequest, "\(query)")
                #expect(bad.errorReason == "bad-width" || bad.errorReason == "unknown-parameter")
            }
        }
    }

    @Test("options may be percent-encoded, in names and values alike, and mean what they spell; '+' is a space")
    func encodedOptions() async throws {
        try await withService(try await .start()) { client, _ in
            let plain = try await client.execute(uri: "/api/v1/elements/1/thumbnail?w=64", method: .get)
            #expect(plain.status == .ok)
            for query in ["w=%36%34", "%77=6%34", "w=64&"] {
                let encoded = try await client.execute(uri: "/api/v1/elements/1/thumbnail?\(query)", method: .get)
                #expect(encoded.status == .ok && encoded.headers[.eTag] == plain.headers[.eTag], "\(query)")
                #expect(encoded.headers[HTTPField.Name("X-TileCache-Source")!] == "memory", "\(query)")
            }
            for query in ["w=+64", "w=6+4", "w=%3G4", "w%3D64"] {
                let bad = try await client.execute(uri: "/api/v1/elements/1/thumbnail?\(query)", method: .get)
                #expect(bad.status == .badRequest, "\(query)")
            }
        }
    }

    @Test("no photo for 90 and up, and upstream 404s, are 404 JSON errors; has_image follows what is served; a 404 is remembered")
    func notFound() async throws {
        var origin = OriginServer.Configuration()
        origin.faults = [FaultRule(pathContains: "/iron.jpg", fault: .status(404))]
        let harness = try await ServiceHarness.start(origin: origin) { $0.pipeline.negativeLifetime = TestTime.scaled(.seconds(3)) }
        try await withService(harness) { client, _ in
            let thorium = try await client.execute(uri: "/api/v1/elements/90/image", method: .get)
            #expect(thorium.status == .notFound && thorium.errorReason == "no-photo")
            #expect(harness.origin.statistics.requests == 0)  // known missing: never asked upstream
            #expect(try await client.execute(uri: "/api/v1/elements/26", method: .get).decoded(as: ServiceJSON.Element.self).hasImage == true)
            let iron = try await client.execute(uri: "/api/v1/elements/Fe/image", method: .get)
            #expect(iron.status == .notFound && iron.errorReason == "upstream-not-found")
            #expect(!String(buffer: iron.body).contains("127.0.0.1"))  // no upstream details in the body
            #expect(try await client.execute(uri: "/api/v1/elements/26", method: .get).decoded(as: ServiceJSON.Element.self).hasImage == false)
            // Upstream has the photo now: the 404 is remembered for its lifetime (3 s here), not asked again meanwhile.
            harness.origin.setFaults([])
            let asked = harness.origin.statistics.requestsByPath.filter { $0.key.hasSuffix("/iron.jpg") }.values.reduce(0, +)
            let remembered = try await client.execute(uri: "/api/v1/elements/Fe/image", method: .get)
            #expect(remembered.status == .notFound && remembered.errorReason == "upstream-not-found")
            #expect(harness.origin.statistics.requestsByPath.filter { $0.key.hasSuffix("/iron.jpg") }.values.reduce(0, +) == asked)
            try await waitUntil("the photo is asked again once the 404 expires") {
                try await client.execute(uri: "/api/v1/elements/Fe/image", method: .get).status == .ok
            }
            #expect(try await client.execute(uri: "/api/v1/elements/26", method: .get).decoded(as: ServiceJSON.Element.self).hasImage == true)
        }
    }

    @Test("cesium: the photo host's caesium.jpg is served under every spelling and remembered in the disk cache")
    func cesiumAlias() async throws {
        let harness = try await ServiceHarness.start()
        try await withService(harness) { client, dependencies in
            let cesium = try await client.execute(uri: "/api/v1/elements/55/image", method: .get)
            #expect(cesium.status == .ok && cesium.bytes == harness.origin.body(forPath: "/images-of-elements/caesium.jpg"))
            #expect(try await client.execute(uri: "/api/v1/elements/55", method: .get).decoded(as: ServiceJSON.Element.self).hasImage == true)
            for uri in ["/cesium.jpg", "/caesium.jpg", "/images-of-elements/cesium.jpg", "/api/v1/elements/caesium/image"] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .ok && response.bytes == cesium.bytes, "\(uri)")
            }
            let primary = harness.configuration.builder.fullImageURL(for: dependencies.catalogue.element(number: 55)!)
            #expect(await dependencies.pipeline.diskCache?.alias(for: primary) == harness.origin.imagesBase + "/caesium.jpg")
        }
    }

    @Test("a client waits at most the request timeout, even while upstream retries")
    func requestTimeout() async throws {
        var origin = OriginServer.Configuration()
        origin.faults = [FaultRule(pathContains: "/Tiles/", fault: .noResponse)]
        let harness = try await ServiceHarness.start(origin: origin) { $0.pipeline.requestTimeout = TestTime.scaled(.milliseconds(300)) }
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
            // A stall (nothing arriving for a second) is the timeout; a whole-transfer deadline this short made a
            // loaded machine's slow reset a timeout too.
            $0.pipeline.downloader.transferOptions.lowSpeedTime = TestTime.scaled(.seconds(1))
        }
        try await withService(harness) { client, dependencies in
            let response = try await client.execute(uri: "/api/v1/elements/1/thumbnail", method: .get)
            #expect(Int(response.status.code) == status && response.errorReason == reason)
            #expect(response.headers[.cacheControl] == "no-store")
            harness.origin.setFaults([])
            let recovered = try await client.execute(uri: "/api/v1/elements/1/thumbnail", method: .get)
            #expect(recovered.status == .ok && ImageFormat.sniff(recovered.bytes) == .jpeg)
            #expect(await dependencies.pipeline.diskCache?.count == 1)
        }
    }
}

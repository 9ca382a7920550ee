import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GRDB
import Testing
import TileCacheService
import TestSupport
import HummingbirdTesting

// The seed apps' side of the contract, written the way the course's students wrote it: URLSession, JSONDecoder,
// `Codable` models with non-optional fields where the data always has a value, `id` a String, image URLs built with
// `String(format: "%03d")` and a lowercased name. Only the host differs from the seed's.

/// The element model of a seed app, keys spelled as the JSON spells them.
private struct Element: Codable {
    let id: String
    let name: String
    let appearance: String?
    let atomic_mass: Double
    let boil: Double?
    let category: String
    let color: String?
    let density: Double?
    let discovered_by: String?
    let melt: Double?
    let molar_heat: Double?
    let named_by: String?
    let number: Int
    let period: Int
    let phase: String
    let source: String
    let spectral_img: String?
    let summary: String
    let symbol: String
    let xpos: Int
    let ypos: Int
    let shells: [Int]
}

/// The same model as other students wrote it: camel case, decoded with `.convertFromSnakeCase`.
private struct CamelElement: Codable {
    let id: String
    let name: String
    let atomicMass: Double
    let molarHeat: Double?
    let discoveredBy: String?
    let spectralImg: String?
    let number: Int
    let symbol: String
    let source: String
    let summary: String
}

/// The January 2019 README's favourite.
private struct Favorite2019January: Codable {
    var id: String?
    let favoritedBy: String
    let elementName: String
    let elementSymbol: String
}

/// The December 2019 README's favourite: an element record plus who favourited it.
private struct Favorite2019December: Codable {
    var id: String?
    let favoritedBy: String
    let name: String
    let symbol: String
    let number: Int
    var atomic_mass: Double?
}

/// A favourite posted as a whole element record, as stored: the record's keys kept, the server's `createdAt` added.
private struct StoredElementFavorite: Decodable {
    let summary: String
    let createdAt: String
}

/// The mock API's error body.
private struct APIError: Decodable {
    struct Body: Decodable {
        let status: Int
        let reason: String
        let message: String
    }
    let error: Body
}

/// A seed app's networking: URLSession against a base URL, JSON in and out.
private struct SeedClient {
    let base: String
    /// One session for the whole process, as an app keeps one (`URLSession.shared`, but ephemeral: no response cache
    /// between tests). On Linux, FoundationNetworking's session leaks four libcurl allocations on every request,
    /// whatever its lifetime, so `make test-sanitize` runs this suite with LeakSanitizer off (docs/reliability.md).
    static let session = URLSession(configuration: .ephemeral)
    var session: URLSession { Self.session }

    func data(_ path: String, method: String = "GET", body: Data? = nil) async throws -> (Data, HTTPURLResponse) {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = method
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await session.data(for: request)
        return (data, response as! HTTPURLResponse)
    }

    func decode<T: Decodable>(_ type: T.Type, _ path: String, method: String = "GET", body: Data? = nil,
                              decoder: JSONDecoder = JSONDecoder()) async throws -> T {
        let (data, _) = try await self.data(path, method: method, body: body)
        return try decoder.decode(T.self, from: data)
    }
}

@Suite("Seed contract: apps written against the course's API work with only the host changed", .timeLimit(.minutes(5)), .heavy)
struct SeedContractTests {
    @Test("elements: [Element] from both routes, ids as strings, every seed key, the seed's values")
    func elements() async throws {
        try await withService(try await .start()) { client, _ in
            let api = SeedClient(base: "http://127.0.0.1:\(try #require(client.port))")
            let first = try await api.decode([Element].self, "/api/v1/elements")
            let remaining = try await api.decode([Element].self, "/api/v1/elements_remaining")
            #expect(first.map(\.number) == Array(1...100) && remaining.map(\.number) == Array(101...118))
            let all = first + remaining
            #expect(all.map(\.id) == (1...118).map(String.init))
            let camel = JSONDecoder()
            camel.keyDecodingStrategy = .convertFromSnakeCase
            #expect(try await api.decode([CamelElement].self, "/api/v1/elements", decoder: camel).count == 100)

            // Values as the course's data set has them (PeriodicTableJSON of 2018-12-21).
            let copernicium = try #require(all.first { $0.symbol == "Cn" })
            #expect(copernicium.density == 23.7 && copernicium.phase == "Gas")
            let cobalt = try #require(all.first { $0.symbol == "Co" })
            #expect(cobalt.color != nil && all.filter { $0.color != nil }.count == 1)
            let sodium = all[10]
            #expect(sodium.name == "Sodium" && sodium.atomic_mass == 22.989769282 && sodium.shells == [2, 8, 1])
            #expect(sodium.source == "https://en.wikipedia.org/wiki/Sodium" && sodium.summary.hasPrefix("Sodium"))
            #expect(all.first { $0.number == 55 }?.name == "Cesium")

            // Every key present, `null` where the data has no value.
            let (data, response) = try await api.data("/api/v1/elements")
            #expect(response.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("application/json") == true)
            let objects = try decode([JSONValue].self, from: data)
            let seedKeys: Set<String> = ["name", "appearance", "atomic_mass", "boil", "category", "color", "density", "discovered_by",
                                         "melt", "molar_heat", "named_by", "number", "period", "phase", "source", "spectral_img",
                                         "summary", "symbol", "xpos", "ypos", "shells", "id"]
            for object in objects { #expect(seedKeys.isSubset(of: object.keys ?? []), "\(object["name"]?.string ?? "?")") }
            #expect(objects[0]["color"] == .null && objects[0]["id"] == .string("1"))
        }
    }

    @Test("images: the seed hosts' URLs with only the host swapped give the API's bytes, validators and 304s")
    func hostSwappedImages() async throws {
        try await withService(try await .start()) { client, _ in
            let base = "http://127.0.0.1:\(try #require(client.port))"
            let api = SeedClient(base: base)
            let elements = try await api.decode([Element].self, "/api/v1/elements")
                + api.decode([Element].self, "/api/v1/elements_remaining")
            for element in elements {
                // As a seed app builds them, with only the host swapped.
                let thumbnail = "/periodictable/Tiles/\(String(format: "%03d", element.number))/s7.JPG"
                let (bytes, response) = try await api.data(thumbnail)
                #expect(response.statusCode == 200 && response.value(forHTTPHeaderField: "Content-Type") == "image/jpeg", "\(thumbnail)")
                let (viaAPI, _) = try await api.data("/api/v1/elements/\(element.id)/thumbnail")
                #expect(bytes == viaAPI, "\(thumbnail)")
                let photo = "/\(element.name.lowercased()).jpg"
                let (photoBytes, photoResponse) = try await api.data(photo)
                // Cesium's photo is served although the host spells it caesium; there are none from 90 up.
                #expect(photoResponse.statusCode == (element.number < 90 ? 200 : 404), "\(photo)")
                if element.number < 90 {
                    let (photoViaAPI, _) = try await api.data("/api/v1/elements/\(element.id)/image")
                    #expect(photoBytes == photoViaAPI, "\(photo)")
                }
            }
            let (iron, ironResponse) = try await api.data("/images-of-elements/iron.jpg")
            let (ironAgain, _) = try await api.data("/iron.jpg")
            #expect(iron == ironAgain && ironResponse.statusCode == 200)
            let etag = try #require(ironResponse.value(forHTTPHeaderField: "ETag"))
            var conditional = URLRequest(url: URL(string: base + "/iron.jpg")!)
            conditional.setValue(etag, forHTTPHeaderField: "If-None-Match")
            let (_, notModified) = try await api.session.data(for: conditional)
            #expect((notModified as? HTTPURLResponse)?.statusCode == 304)
            let (small, smallResponse) = try await api.data("/periodictable/Tiles/026/s7.JPG?w=32")
            #expect(smallResponse.statusCode == 200 && !small.isEmpty)
            for (path, reason) in [("/periodictable/Tiles/26/s7.JPG", "unknown-element"), ("/periodictable/Tiles/119/s7.JPG", "unknown-element"),
                                   ("/Iron.jpg", "unknown-element"), ("/unobtainium.jpg", "unknown-element"),
                                   ("/periodictable/Tiles/026/s7.jpg", "no-route")] {
                let (data, response) = try await api.data(path)
                #expect(response.statusCode == 404, "\(path)")
                #expect(try JSONDecoder().decode(APIError.self, from: data).error.reason == reason, "\(path)")
            }
        }
    }

    @Test("favourites: both README bodies post, every record decodes with either model, filter, delete",
          arguments: FavoritesBackend.allCases)
    func favorites(backend: FavoritesBackend) async throws {
        try await withService(try await .start(favorites: backend)) { client, _ in
            let api = SeedClient(base: "http://127.0.0.1:\(try #require(client.port))")
            let january = try JSONEncoder().encode(Favorite2019January(favoritedBy: "Ada Lovelace", elementName: "Iron", elementSymbol: "Fe"))
            let (created, response) = try await api.data("/api/v1/favorites", method: "POST", body: january)
            #expect(response.statusCode == 201)
            let first = try JSONDecoder().decode(Favorite2019January.self, from: created)
            #expect(first.id == "1" && first.elementName == "Iron")

            // December 2019: the element record as the app has it (its own id included), plus favoritedBy.
            let sodium = try await api.decode(Element.self, "/api/v1/elements/11")
            var record = try decode([String: JSONValue].self, from: JSONEncoder().encode(sodium))
            record["favoritedBy"] = .string("Grace")
            let (createdRecord, recordResponse) = try await api.data("/api/v1/favorites", method: "POST",
                                                                     body: try JSONEncoder().encode(record))
            #expect(recordResponse.statusCode == 201)
            let second = try JSONDecoder().decode(Favorite2019December.self, from: createdRecord)
            #expect(second.id == "2" && second.number == 11 && second.atomic_mass == 22.989769282)  // the posted id "11" is not kept
            let stored = try decode(StoredElementFavorite.self, from: createdRecord)  // createdAt decoded: a string
            #expect(stored.summary == sodium.summary)

            let asJanuary = try await api.decode([Favorite2019January].self, "/api/v1/favorites")
            let asDecember = try await api.decode([Favorite2019December].self, "/api/v1/favorites")
            #expect(asJanuary.map(\.elementSymbol) == ["Fe", "Na"] && asDecember.map(\.number) == [26, 11])
            let ada = try await api.decode([Favorite2019January].self, "/api/v1/favorites?favoritedBy=Ada+Lovelace")
            #expect(ada.map(\.id) == ["1"])

            let (_, deleted) = try await api.data("/api/v1/favorites/1", method: "DELETE")
            #expect(deleted.statusCode == 200)
            let (gone, goneResponse) = try await api.data("/api/v1/favorites/1")
            let goneError = try JSONDecoder().decode(APIError.self, from: gone)
            #expect(goneResponse.statusCode == 404 && goneError.error.reason == "unknown-favorite")
            #expect(try await api.decode([Favorite2019December].self, "/api/v1/favorites").map(\.id) == ["2"])
        }
    }

    @Test("favourites stored before the v2 schema (integer ids, three keys) decode with both models after the migration")
    func migration() async throws {
        let harness = try await ServiceHarness.start()
        try FileManager.default.createDirectory(atPath: harness.directory, withIntermediateDirectories: true)
        try Self.writeVersion1Database(at: harness.configuration.database.description)
        _ = try await withService(harness) { client, _ in
            let api = SeedClient(base: "http://127.0.0.1:\(try #require(client.port))")
            let january = try await api.decode([Favorite2019January].self, "/api/v1/favorites")
            let december = try await api.decode([Favorite2019December].self, "/api/v1/favorites")
            #expect(january.map(\.id) == ["1", "2"] && january.map(\.elementName) == ["Sodium", "Gold"])
            #expect(december.map(\.number) == [11, 79] && december.map(\.symbol) == ["Na", "Au"])
            let next = try JSONEncoder().encode(Favorite2019January(favoritedBy: "Ada", elementName: "Iron", elementSymbol: "Fe"))
            // Id 3 was deleted before the migration: it is never handed out again.
            #expect(try await api.decode(Favorite2019January.self, "/api/v1/favorites", method: "POST", body: next).id == "4")
        }
    }

    /// The v1 schema and rows, as the previous release wrote them.
    private static func writeVersion1Database(at path: String) throws {
        let old = try DatabaseQueue(path: path)
        try old.write { db in
            try db.execute(sql: """
                CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                INSERT INTO grdb_migrations VALUES ('v1');
                CREATE TABLE favorite (id INTEGER PRIMARY KEY AUTOINCREMENT, favoritedBy TEXT NOT NULL, elementName TEXT NOT NULL,
                                       elementSymbol TEXT NOT NULL, createdAt TEXT NOT NULL);
                INSERT INTO favorite (favoritedBy, elementName, elementSymbol, createdAt) VALUES
                    ('Ada', 'Sodium', 'Na', '2026-01-01T00:00:00.000Z'), ('Grace', 'Gold', 'Au', '2026-01-02T00:00:00.000Z'),
                    ('Ada', 'Iron', 'Fe', '2026-01-03T00:00:00.000Z');
                DELETE FROM favorite WHERE id = 3;
                """)
        }
        try old.close()
    }
}

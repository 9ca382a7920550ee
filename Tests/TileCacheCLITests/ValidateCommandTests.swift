import Foundation
import ImageCore
import Testing
import TileCacheCLI
import TileCacheFixtures
import TileCacheOrigin

@Suite("tilecache validate against the loopback origin")
struct ValidateCommandTests {
    @Test("catalogue photos: cesium is ok, served by caesium.jpg; 90+ listed as expected missing; nothing stored")
    func cataloguePhotos() async throws {
        try await withTemporaryDirectory { cache in
            let origin = try await OriginServer.start()
            let run = await tilecache(["validate", "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase,
                                       "--elements", "Cs,Fe,90", "--kind", "full", "--cache-dir", cache, "--format", "json"])
            await origin.shutdown()
            #expect(run.code == 0)
            let json = try #require(try run.json() as? [String: Any])
            #expect(json["checked"] as? Int == 3 && json["ok"] as? Int == 2 && json["broken"] as? Int == 0)
            #expect(json["expectedMissing"] as? Int == 1)
            let results = try #require(json["results"] as? [[String: Any]])
            let iron = try #require(results.first { ($0["url"] as? String)?.hasSuffix("/iron.jpg") == true })
            #expect(iron["ok"] as? Bool == true && iron["status"] as? Int == 200 && iron["format"] as? String == "jpeg")
            #expect(iron["contentType"] as? String == "image/jpeg" && (iron["width"] as? Int ?? 0) >= 500)
            #expect((iron["bytes"] as? Int ?? 0) > 10_000 && iron["reason"] is NSNull)
            #expect((iron["timeMilliseconds"] as? Double ?? 0) > 0)
            let cesium = try #require(results.first { ($0["url"] as? String)?.hasSuffix("/cesium.jpg") == true })
            #expect(cesium["ok"] as? Bool == true && cesium["status"] as? Int == 200 && cesium["reason"] is NSNull)
            #expect(cesium["servedBy"] as? String == origin.imagesBase + "/caesium.jpg")
            let thorium = try #require(results.first { ($0["url"] as? String)?.hasSuffix("/thorium.jpg") == true })
            #expect(thorium["expectedMissing"] as? Bool == true)
            #expect(!FileManager.default.fileExists(atPath: cache + "/entries"))  // nothing stored without --store
        }
    }

    @Test("hostile responses get their exact reason; a JPEG served as text/plain is ok with a warning; --store keeps only valid images")
    func reasons() async throws {
        try await withTemporaryDirectory { cache in
            var configuration = OriginServer.Configuration()
            configuration.faults = FaultProfile.rules(named: "hostile")!
            let origin = try await OriginServer.start(configuration)
            let run = await tilecache(["validate", "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase,
                                       "--elements", "1-8", "--kind", "thumbnails", "--retries", "0", "--store",
                                       "--cache-dir", cache, "--format", "json"])
            let lithium = await tilecache(["validate", "--images-base", origin.imagesBase, "--elements", "Li", "--kind", "full",
                                           "--format", "json"])
            await origin.shutdown()
            #expect(run.code == 2)
            let results = try #require((try run.json() as? [String: Any])?["results"] as? [[String: Any]])
            let reasons = results.map { $0["reason"] as? String ?? "ok" }
            #expect(reasons == ["ok", "ok", "not-an-image", "truncated", "connect", "dimensions", "http-status", "redirect-loop"])
            #expect(results[6]["status"] as? Int == 500)
            #expect(results[2]["format"] is NSNull && results[2]["contentType"] as? String == "image/jpeg")
            let stored = try FileManager.default.contentsOfDirectory(atPath: cache + "/entries").filter { $0.hasSuffix(".tce") }
            #expect(stored.count == 2)
            #expect(lithium.code == 0)
            let lithiumResult = try #require(((try lithium.json() as? [String: Any])?["results"] as? [[String: Any]])?.first)
            #expect(lithiumResult["ok"] as? Bool == true && lithiumResult["contentType"] as? String == "text/plain")
            #expect((lithiumResult["warnings"] as? [String])?.first?.contains("content-type mismatch") == true)
        }
    }

    @Test("a --urls list: invalid lines are reported as invalid input and not fetched; the table lists everything")
    func urlList() async throws {
        try await withTemporaryDirectory { directory in
            let origin = try await OriginServer.start()
            try "\(origin.tilesBase)/Tiles/001/s7.JPG\nnot a url\nmailto:someone@example.com\n"
                .write(toFile: directory + "/list.txt", atomically: true, encoding: .utf8)
            let run = await tilecache(["validate", "--urls", directory + "/list.txt"])
            await origin.shutdown()
            #expect(run.code == 2)
            #expect(run.out.contains("3 checked: 1 ok, 2 broken, 0 expected missing"))
            #expect(run.out.contains("invalid-input: \(directory)/list.txt:2: not an http(s) URL; not fetched"))
            #expect(origin.statistics.requests == 1)
        }
    }
}

@Suite("validate: list files from Windows and spreadsheets")
struct ValidateListFileTests {
    @Test("CRLF, CR, a byte-order mark, trailing white space and comments: every URL is checked on its own",
          arguments: ["\r\n", "\r", "\n"])
    func lineEndings(ending: String) async throws {
        try await withTemporaryDirectory { directory in
            let origin = try await OriginServer.start()
            let lines = ["# thumbnails", "\(origin.tilesBase)/Tiles/001/s7.JPG  ", "\(origin.tilesBase)/Tiles/002/s7.JPG\t# helium",
                         "", "\(origin.tilesBase)/Tiles/003/s7.JPG"]
            let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(lines.joined(separator: ending).utf8) + Array(ending.utf8)
            try Data(bytes).write(to: URL(fileURLWithPath: directory + "/list.txt"))
            let run = await tilecache(["validate", "--urls", directory + "/list.txt", "--format", "json"])
            await origin.shutdown()
            #expect(run.code == 0, "\(run.out)")
            let json = try #require(try run.json() as? [String: Any])
            #expect(json["checked"] as? Int == 3 && json["ok"] as? Int == 3)
            let urls = (json["results"] as? [[String: Any]])?.compactMap { $0["url"] as? String }
            #expect(urls == (1...3).map { "\(origin.tilesBase)/Tiles/00\($0)/s7.JPG" })
        }
    }
}

@Suite("validate: URLs a user lists")
struct ValidateSchemeTests {
    @Test("a --urls list may point anywhere over http(s), never at another scheme or with credentials")
    func schemes() async throws {
        try await withTemporaryDirectory { directory in
            let origin = try await OriginServer.start()
            let list = ["file:///etc/passwd", "ftp://127.0.0.1/x.jpg", "gopher://127.0.0.1:\(origin.port)/", "javascript:alert(1)",
                        "http://user:secret@127.0.0.1:\(origin.port)/periodictable/Tiles/001/s7.JPG",
                        "\(origin.tilesBase)/Tiles/001/s7.JPG"]
            try list.joined(separator: "\n").write(toFile: directory + "/list.txt", atomically: true, encoding: .utf8)
            let run = await tilecache(["validate", "--urls", directory + "/list.txt", "--format", "json"])
            await origin.shutdown()
            let results = try #require((try run.json() as? [String: Any])?["results"] as? [[String: Any]])
            #expect(results.map { $0["reason"] as? String ?? "ok" }
                    == ["invalid-input", "invalid-input", "invalid-input", "invalid-input", "invalid-url", "ok"])
            #expect(origin.statistics.requests == 1)
        }
    }
}

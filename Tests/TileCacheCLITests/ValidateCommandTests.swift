import Foundation
import ImageCore
import Testing
import TileCacheCLI
import TestSupport
import TileCacheOrigin

@Suite("tilecache validate against the loopback origin", .timeLimit(.minutes(5)), .heavy)
struct ValidateCommandTests {
    @Test("catalogue photos: cesium is ok, served by caesium.jpg; 90+ listed as expected missing; nothing stored")
    func cataloguePhotos() async throws {
        try await withTemporaryDirectory { cache in
            try await withOrigin { origin in
                let run = await tilecache(["validate", "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase,
                                           "--elements", "Cs,Fe,90", "--kind", "full", "--cache-dir", cache, "--format", "json"])
                #expect(run.code == 0)
                let report = try run.decoded(as: URLValidationReport.self)
                #expect(report.checked == 3 && report.ok == 2 && report.broken == 0 && report.expectedMissing == 1)
                let iron = try #require(report.results.first { $0.url.hasSuffix("/iron.jpg") })
                #expect(iron.ok && iron.status == 200 && iron.format == "jpeg" && iron.reason == nil)
                #expect(iron.contentType == "image/jpeg" && (iron.width ?? 0) >= 500)
                #expect((iron.bytes ?? 0) > 10_000 && (iron.timeMilliseconds ?? 0) > 0)
                let cesium = try #require(report.results.first { $0.url.hasSuffix("/cesium.jpg") })
                #expect(cesium.ok && cesium.status == 200 && cesium.reason == nil)
                #expect(cesium.servedBy == origin.imagesBase + "/caesium.jpg")
                #expect(report.results.first { $0.url.hasSuffix("/thorium.jpg") }?.expectedMissing == true)
                // Absent values are written as null, not left out: clients that read keys find every one.
                let raw = try #require(try run.decoded(as: JSONValue.self)["results"]?.array)
                #expect(raw.allSatisfy { $0["reason"] != nil }
                        && raw.first { $0["url"]?.string?.hasSuffix("/iron.jpg") == true }?["reason"] == .null)
                #expect(!FileManager.default.fileExists(atPath: cache + "/entries"))  // nothing stored without --store
            }
        }
    }

    @Test("--progress counts known-missing photos (90 and up) as expected missing, never as failed; its last line agrees with the report")
    func progressCountsExpectedMissing() async throws {
        try await withOrigin { origin in
            let run = await tilecache(["validate", "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase,
                                       "--elements", "Cs,Fe,Th,Pa", "--kind", "full", "--progress", "--format", "json"])
            #expect(run.code == 0, "\(run.err)")
            let report = try run.decoded(as: URLValidationReport.self)
            #expect(report.ok == 2 && report.broken == 0 && report.expectedMissing == 2)
            let lines = run.err.split(separator: "\n").filter { $0.hasPrefix("progress: ") }
            #expect(!lines.isEmpty && lines.allSatisfy { $0.contains("  failed 0") && !$0.contains("failures") }, "\(run.err)")
            #expect(lines.last?.hasPrefix("progress: 100% (4/4)") == true, "\(run.err)")
            #expect(lines.last?.hasSuffix("hits 0  failed \(report.broken)  expected missing \(report.expectedMissing)") == true, "\(run.err)")
        }
    }

    @Test("hostile responses get their exact reason; a JPEG served as text/plain is ok with a warning; --store keeps only valid images")
    func reasons() async throws {
        try await withTemporaryDirectory { cache in
            var configuration = OriginServer.Configuration()
            configuration.faults = FaultProfile.rules(named: "hostile")!
            try await withOrigin(configuration) { origin in
                let run = await tilecache(["validate", "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase,
                                           "--elements", "1-8", "--kind", "thumbnails", "--retries", "0", "--store",
                                           "--cache-dir", cache, "--format", "json"])
                let lithium = await tilecache(["validate", "--images-base", origin.imagesBase, "--elements", "Li", "--kind", "full",
                                               "--format", "json"])
                #expect(run.code == 2)
                let results = try run.decoded(as: URLValidationReport.self).results
                #expect(results.map { $0.reason ?? "ok" } == ["ok", "ok", "not-an-image", "truncated", "connect", "dimensions", "http-status", "redirect-loop"])
                #expect(results[6].status == 500)
                #expect(results[2].format == nil && results[2].contentType == "image/jpeg")
                let stored = try FileManager.default.contentsOfDirectory(atPath: cache + "/entries").filter { $0.hasSuffix(".tce") }
                #expect(stored.count == 2)
                #expect(lithium.code == 0)
                let lithiumResult = try #require(try lithium.decoded(as: URLValidationReport.self).results.first)
                #expect(lithiumResult.ok && lithiumResult.contentType == "text/plain")
                #expect(lithiumResult.warnings.first?.contains("content-type mismatch") == true)
            }
        }
    }

    @Test("a --urls list: invalid lines are reported as invalid input and not fetched; the table lists everything")
    func urlList() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                try "\(origin.tilesBase)/Tiles/001/s7.JPG\nnot a url\nmailto:someone@example.com\n"
                    .write(toFile: directory + "/list.txt", atomically: true, encoding: .utf8)
                let run = await tilecache(["validate", "--urls", directory + "/list.txt"])
                #expect(run.code == 2)
                #expect(run.out.contains("3 checked: 1 ok, 2 broken, 0 expected missing"))
                #expect(run.out.contains("invalid-input: \(directory)/list.txt:2: not an http(s) URL; not fetched"))
                #expect(origin.statistics.requests == 1)
            }
        }
    }
}

@Suite("validate: list files from Windows and spreadsheets", .timeLimit(.minutes(5)), .heavy)
struct ValidateListFileTests {
    @Test("CRLF, CR, a byte-order mark, trailing white space and comments: every URL is checked on its own",
          arguments: ["\r\n", "\r", "\n"])
    func lineEndings(ending: String) async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let lines = ["# thumbnails", "\(origin.tilesBase)/Tiles/001/s7.JPG  ", "\(origin.tilesBase)/Tiles/002/s7.JPG\t# helium",
                             "", "\(origin.tilesBase)/Tiles/003/s7.JPG"]
                let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(lines.joined(separator: ending).utf8) + Array(ending.utf8)
                try Data(bytes).write(to: URL(fileURLWithPath: directory + "/list.txt"))
                let run = await tilecache(["validate", "--urls", directory + "/list.txt", "--format", "json"])
                #expect(run.code == 0, "\(run.out)")
                let report = try run.decoded(as: URLValidationReport.self)
                #expect(report.checked == 3 && report.ok == 3)
                #expect(report.results.map(\.url) == (1...3).map { "\(origin.tilesBase)/Tiles/00\($0)/s7.JPG" })
            }
        }
    }
}

@Suite("validate: URLs a user lists", .timeLimit(.minutes(5)), .heavy)
struct ValidateSchemeTests {
    @Test("a --urls list may point anywhere over http(s), never at another scheme or with credentials")
    func schemes() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let list = ["file:///etc/passwd", "ftp://127.0.0.1/x.jpg", "gopher://127.0.0.1:\(origin.port)/", "javascript:alert(1)",
                            "http://user:secret@127.0.0.1:\(origin.port)/periodictable/Tiles/001/s7.JPG",
                            "\(origin.tilesBase)/Tiles/001/s7.JPG"]
                try list.joined(separator: "\n").write(toFile: directory + "/list.txt", atomically: true, encoding: .utf8)
                let run = await tilecache(["validate", "--urls", directory + "/list.txt", "--format", "json"])
                let results = try run.decoded(as: URLValidationReport.self).results
                #expect(results.map { $0.reason ?? "ok" }
                        == ["invalid-input", "invalid-input", "invalid-input", "invalid-input", "invalid-url", "ok"])
                #expect(origin.statistics.requests == 1)
            }
        }
    }
}

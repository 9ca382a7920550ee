import Catalogue
import Foundation
import ImageCore
import Testing
import TileCacheCLI
import TestSupport
import TileCacheOrigin

@Suite("tilecache stats, clear and demo", .timeLimit(.minutes(5)), .heavy)
struct CacheCommandsTests {
    @Test("a run log written before interrupted runs existed is still read (no interrupted, notCompleted or warnings)")
    func olderRunLog() async throws {
        try await withTemporaryDirectory { cache in
            let older = #"{"command":"prefetch","date":"2026-11-21T10:41:27Z","report":{"bytesDownloaded":1,"diskHits":0,"#
                + #""durationSeconds":0.1,"expectedMissing":0,"expectedMissingURLs":[],"failed":0,"failures":[],"hitRate":0,"#
                + #""imagesPerSecond":10,"latencyMilliseconds":{},"memoryHits":0,"networkFetches":1,"requested":1,"#
                + #""revalidated":0,"run":1,"skippedKnownMissing":0,"succeeded":1}}"# + "\n"
            try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
            try older.write(toFile: cache + "/runs.jsonl", atomically: true, encoding: .utf8)
            let entries = RunLog.entries(cacheDirectory: cache)
            #expect(entries.count == 1)
            #expect(entries.first?.report.interrupted == false && entries.first?.report.notCompleted == 0)
            #expect(entries.first?.report.warnings == [] && entries.first?.report.succeeded == 1)
        }
    }

    @Test("stats counts entries by kind and lists logged runs; clear empties the cache but keeps the log")
    func statsAndClear() async throws {
        try await withTemporaryDirectory { cache in
            try await withOrigin { origin in
                let prefetch = await tilecache(["prefetch", "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase,
                                                "--elements", "1-3", "--cache-dir", cache, "--format", "json"])
                #expect(prefetch.code == 0)

                let stats = await tilecache("stats", "--cache-dir", cache, "--format", "json")
                #expect(stats.code == 0)
                let json = try stats.decoded(as: CLIJSON.CacheStats.self)
                #expect(json.entries == 6 && json.bytes > 0)
                #expect(json.byKind.map(\.kind) == ["thumbnail", "full"] && json.byKind.map(\.entries) == [3, 3])
                #expect(json.runs.count == 1)
                #expect(json.oldest != nil && json.newest != nil)

                let table = await tilecache("stats", "--cache-dir", cache)
                #expect(table.out.contains("6 entries") && table.out.contains("last runs:"))

                let clear = await tilecache("clear", "--cache-dir", cache, "--yes")
                #expect(clear.code == 0 && clear.out.contains("removed 6 cached images"))
                let after = try await tilecache("stats", "--cache-dir", cache, "--format", "json").decoded(as: CLIJSON.CacheStats.self)
                #expect(after.entries == 0 && after.runs.count == 1)
            }
        }
    }

    @Test("clear asks on a terminal and keeps everything unless the answer is yes")
    func clearAsks() async throws {
        try await withTemporaryDirectory { cache in
            try await withOrigin { origin in
                _ = await tilecache(["prefetch", "--tiles-base", origin.tilesBase, "--elements", "1", "--kind", "thumbnails", "--cache-dir", cache])
                var (console, captured) = Console.capturing()
                console.errIsTerminal = true
                console.readLine = { "n" }
                let code = await Console.$current.withValue(console) { await TileCacheCommand.run(arguments: ["clear", "--cache-dir", cache]) }
                #expect(code == 0 && captured.err.contains("[y/N]") && captured.err.contains("nothing removed"))
                let kept = try await DiskCache(directory: cache).count
                #expect(kept == 1)
                console.readLine = { "y" }
                _ = await Console.$current.withValue(console) { await TileCacheCommand.run(arguments: ["clear", "--cache-dir", cache]) }
                let left = try await DiskCache(directory: cache).count
                #expect(left == 0)
            }
        }
    }

    /// The part of `stats --format json` these tests read, decoded as a client would.
    struct StatsReport: Decodable {
        var entries: Int
        var verification: DiskCache.Verification?
    }

    @Test("stats refuses a cache directory that does not exist or is a file, naming it: a typo is not an empty cache")
    func statsMissingDirectory() async throws {
        try await withTemporaryDirectory { directory in
            let missing = await tilecache("stats", "--cache-dir", directory + "/no/such/dir")
            #expect(missing.code == 1 && missing.out.isEmpty)
            #expect(missing.err.contains("\(directory)/no/such/dir: No such file or directory: no disk cache there"), "\(missing.err)")
            let file = directory + "/a-file"
            try Data("x".utf8).write(to: URL(fileURLWithPath: file))
            for arguments in [["stats"], ["stats", "--verify"]] {
                let run = await tilecache(arguments + ["--cache-dir", file])
                #expect(run.code == 1 && run.err.contains("\(file) is not a directory"), "\(arguments): \(run.err)")
            }
            #expect(!FileManager.default.fileExists(atPath: directory + "/no"), "nothing is created")
        }
    }

    @Test("stats --last 0 shows no runs and does not claim none were logged")
    func statsLastZero() async throws {
        try await withTemporaryDirectory { cache in
            try await withOrigin { origin in
                _ = await tilecache(["prefetch", "--tiles-base", origin.tilesBase, "--elements", "1", "--kind", "thumbnails", "--cache-dir", cache])
                let none = await tilecache("stats", "--cache-dir", cache, "--last", "0")
                #expect(none.code == 0 && !none.out.contains("no runs logged yet") && !none.out.contains("last runs"), "\(none.out)")
                let one = await tilecache("stats", "--cache-dir", cache, "--last", "1")
                #expect(one.out.contains("last runs:"))
            }
        }
    }

    @Test("stats --verify names each damaged entry it removed: path, URL and reason")
    func verifyNamesDamage() async throws {
        try await withTemporaryDirectory { cache in
            try await withOrigin { origin in
                _ = await tilecache(["prefetch", "--tiles-base", origin.tilesBase, "--elements", "1-3", "--kind", "thumbnails", "--cache-dir", cache])
                let disk = try DiskCache(directory: cache)
                let url = origin.urlBuilder.thumbnailURL(for: ElementCatalogue.standard.element(number: 2)!)
                let path = disk.path(for: url)
                var file = try Data(contentsOf: URL(fileURLWithPath: path))
                file[file.count - 10] ^= 0xFF
                try file.write(to: URL(fileURLWithPath: path))

                let text = await tilecache("stats", "--verify", "--cache-dir", cache)
                #expect(text.code == 2)
                #expect(text.out.contains("1 damaged and removed"))
                #expect(text.out.contains("removed \(path) (\(url)): checksum mismatch"), "\(text.out)")

                try file.write(to: URL(fileURLWithPath: path))
                let json = await tilecache("stats", "--verify", "--cache-dir", cache, "--format", "json")
                let report = try JSONDecoder().decode(StatsReport.self, from: Data(json.out.utf8))
                let failure = try #require(report.verification?.failures.first)
                #expect(report.verification?.removed == 1 && report.verification?.valid == 2 && report.entries == 2)
                #expect(failure.path == path && failure.url == url && failure.reason == "checksum mismatch")
            }
        }
    }

    @Test("clear off a terminal removes nothing without --yes, and says to add it")
    func clearNeedsYesOffTerminal() async throws {
        try await withTemporaryDirectory { cache in
            try await withOrigin { origin in
                _ = await tilecache(["prefetch", "--tiles-base", origin.tilesBase, "--elements", "1", "--kind", "thumbnails", "--cache-dir", cache])
                let refused = await tilecache("clear", "--cache-dir", cache)
                #expect(refused.code == 1 && refused.err.contains("there is no terminal to ask on: add --yes"), "\(refused.err)")
                let kept = try await DiskCache(directory: cache).count
                #expect(kept == 1)
                let cleared = await tilecache("clear", "--cache-dir", cache, "--yes")
                let left = try await DiskCache(directory: cache).count
                #expect(cleared.code == 0 && left == 0)
            }
        }
    }

    @Test("demo: cold from the network, then warm disk in a new pipeline, then warm memory")
    func demo() async throws {
        let run = await tilecache("demo", "--latency-ms", "0", "--format", "json")
        #expect(run.code == 0, "\(run.err)")
        #expect(run.err.isEmpty)
        let runs = try #require(try run.decoded(as: CLIJSON.Prefetch.self).runs)
        #expect(runs.count == 3)
        // 89 photos (cesium's found as caesium.jpg) and 118 thumbnails; 29 photos the host has none of.
        #expect(runs[0].networkFetches == 207 && runs[0].expectedMissing == 29 && runs[0].failed == 0)
        #expect(runs.allSatisfy { $0.aliases.count == 1 })
        #expect(runs[1].diskHits == 207 && runs[1].networkFetches == 0)
        #expect(runs[2].memoryHits == 207)
    }
}

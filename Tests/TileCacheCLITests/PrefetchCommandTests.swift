import Foundation
import ImageCore
import Testing
import TileCacheCLI
import TestSupport
import TileCacheOrigin

@Suite("tilecache prefetch against the loopback origin", .timeLimit(.minutes(5)), .heavy)
struct PrefetchCommandTests {
    func arguments(_ origin: OriginServer, cache: String, _ extra: String...) -> [String] {
        ["prefetch", "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase, "--cache-dir", cache,
         "--format", "json"] + extra
    }

    @Test("JSON has every documented key; a second run in one process is served from the caches")
    func repeatRuns() async throws {
        try await withTemporaryDirectory { cache in
            try await withOrigin { origin in
                let run = await tilecache(arguments(origin, cache: cache, "--elements", "1-4", "--repeat", "2"))
                #expect(run.code == 0, "\(run.err)")
                #expect(run.err.isEmpty)  // off a terminal: no progress, nothing on stderr
                // Decoding needs every documented key of a run, at the top level and in each of `runs`.
                let json = try run.decoded(as: CLIJSON.Prefetch.self)
                let runs = try #require(json.runs)
                #expect(runs.count == 2)
                #expect(runs[0].requested == 8 && runs[0].networkFetches == 8)
                #expect(runs[0].hitRate == 0)
                #expect(runs[1].networkFetches == 0)
                #expect(runs[1].memoryHits + runs[1].diskHits == 8)
                #expect(runs[1].hitRate == 1)
                // Each URL asked once, by the first run only (a transfer retried on a loaded machine is a request more,
                // never a second URL).
                #expect(origin.statistics.requestsByPath.count == 8 && origin.statistics.requests >= 8)
                #expect(RunLog.entries(cacheDirectory: cache).map(\.report.run) == [1, 2])
            }
        }
    }

    @Test("--sizes makes every width in every format of each image fetched, into the caches: a later process finds them without the network")
    func sizes() async throws {
        try await withTemporaryDirectory { cache in
            try await withOrigin { origin in
                let run = await tilecache(arguments(origin, cache: cache, "--elements", "1-3", "--kind", "thumbnails", "--sizes", "32,64",
                                                    "--size-formats", "auto,webp"))
                #expect(run.code == 0, "\(run.err)")
                let variants = try #require(try run.decoded(as: CLIJSON.Prefetch.self).variants)
                #expect(variants.widths == [32, 64] && variants.formats == ["auto", "webp"])
                #expect(variants.requested == 12 && variants.made == 12 && variants.failures.isEmpty)
                let requests = origin.statistics.requests
                // Another pipeline on the same disk cache, allowed no download: each variant is there.
                var configuration = ImagePipeline.Configuration()
                configuration.diskDirectory = cache
                let pipeline = ImagePipeline(configuration: configuration)
                for number in 1...3 {
                    for (width, format) in [(32, nil), (64, nil), (32, .webp), (64, ImageProcessing.OutputFormat.webp)] {
                        let url = origin.tilesBase + String(format: "/Tiles/%03d/s7.JPG", number)
                        let served = try await pipeline.image(for: ImageRequest(url: url, processing: ImageProcessing(width: width, format: format),
                                                                                options: .returnCacheDataDontLoad))
                        #expect(served.header.width == width && served.header.format == (format == .webp ? .webp : .jpeg))
                    }
                }
                #expect(origin.statistics.requests == requests)
                let bad = await tilecache(arguments(origin, cache: cache, "--sizes", "64,0"))
                #expect(bad.code == 1 && bad.err.contains("--sizes: '0'"), "\(bad.err)")
                // Warming as a guarded service fetches: the loopback origin is refused, every URL broken with the reason.
                let guarded = await tilecache(arguments(origin, cache: cache, "--elements", "1", "--kind", "thumbnails", "--public-addresses-only"))
                let guardedReasons = try guarded.decoded(as: CLIJSON.Prefetch.self).failures.map(\.reason)
                #expect(guarded.code == 2 && guardedReasons == ["forbidden-address"], "\(guarded.out)")
                let badFormat = await tilecache(arguments(origin, cache: cache, "--sizes", "64", "--size-formats", "gif"))
                #expect(badFormat.code == 1 && badFormat.err.contains("--size-formats: 'gif'"), "\(badFormat.err)")
            }
        }
    }

    @Test("the default catalogue succeeds: cesium's photo is found as caesium.jpg, reported as an alias, remembered for the next process")
    func cesiumAlias() async throws {
        try await withTemporaryDirectory { cache in
            try await withOrigin { origin in
                let first = await tilecache(arguments(origin, cache: cache, "--kind", "full"))
                let afterFirst = origin.statistics.requests
                let second = await tilecache(arguments(origin, cache: cache, "--kind", "full"))  // a new process, same cache
                let afterSecond = origin.statistics.requests
                let table = await tilecache(["prefetch", "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase,
                                             "--cache-dir", cache, "--elements", "Cs", "--kind", "full"])
                #expect(first.code == 0, "\(first.out)")
                let report = try first.decoded(as: PrefetchReport.self)
                #expect(report.failed == 0 && report.succeeded == 89 && report.skippedKnownMissing == 29)
                #expect(report.aliases.map { [$0.url, $0.servedBy] } == [[origin.imagesBase + "/cesium.jpg", origin.imagesBase + "/caesium.jpg"]])
                #expect(afterFirst >= 90)  // 89 photos and one 404 for cesium.jpg (more if a loaded machine made a transfer retry)
                #expect(second.code == 0 && afterSecond == afterFirst)  // all from disk, the alias included
                #expect(try second.decoded(as: PrefetchReport.self).diskHits == 89)
                #expect(table.code == 0 && table.out.contains("cesium.jpg -> caesium.jpg"), "\(table.out)")
            }
        }
    }

    @Test("broken URLs are listed with their reason and give exit code 2")
    func brokenURLs() async throws {
        try await withTemporaryDirectory { cache in
            var configuration = OriginServer.Configuration()
            configuration.faults = FaultProfile.rules(named: "hostile")!
            try await withOrigin(configuration) { origin in
                let run = await tilecache(arguments(origin, cache: cache, "--elements", "3,6,8", "--kind", "thumbnails", "--retries", "0"))
                #expect(run.code == 2)
                let report = try run.decoded(as: PrefetchReport.self)
                #expect(report.failed == 3 && report.succeeded == 0)
                #expect(Set(report.failures.map(\.reason)) == ["not-an-image", "dimensions", "redirect-loop"])
                #expect(report.failures.allSatisfy { $0.url.hasPrefix(origin.tilesBase) && !$0.message.isEmpty })
                #expect(FileManager.default.fileExists(atPath: cache + "/entries"))
                #expect(try FileManager.default.contentsOfDirectory(atPath: cache + "/entries").filter { $0.hasSuffix(".tce") }.isEmpty)
            }
        }
    }

    @Test("known-missing photos are skipped by default, and reported apart from broken ones when included")
    func knownMissing() async throws {
        try await withTemporaryDirectory { cache in
            try await withOrigin { origin in
                let skipped = await tilecache(arguments(origin, cache: cache, "--elements", "89-91", "--kind", "full"))
                let included = await tilecache(arguments(origin, cache: cache, "--elements", "89-91", "--kind", "full", "--include-known-missing"))
                #expect(skipped.code == 0)
                let skippedReport = try skipped.decoded(as: PrefetchReport.self)
                #expect(skippedReport.requested == 1 && skippedReport.skippedKnownMissing == 2)
                #expect(included.code == 0)
                let includedReport = try included.decoded(as: PrefetchReport.self)
                #expect(includedReport.expectedMissing == 2 && includedReport.failed == 0)
            }
        }
    }

    @Test("--urls takes any list; lines that are not http(s) URLs are invalid input, never fetched")
    func urlList() async throws {
        try await withTemporaryDirectory { cache in
            try await withOrigin { origin in
                let list = """
                    # rover photos, or anything else
                    \(origin.tilesBase)/Tiles/026/s7.JPG

                    ftp://example.com/x.jpg
                    \(origin.imagesBase)/cesium.jpg
                    """
                try list.write(toFile: cache + "/urls.txt", atomically: true, encoding: .utf8)
                let run = await tilecache(["prefetch", "--urls", cache + "/urls.txt", "--cache-dir", cache, "--format", "json"])
                #expect(run.code == 2)
                let report = try run.decoded(as: PrefetchReport.self)
                #expect(report.requested == 3 && report.succeeded == 1)
                let ftp = try #require(report.failures.first { $0.url == "ftp://example.com/x.jpg" })
                #expect(ftp.reason == "invalid-input" && ftp.message.contains("urls.txt:4"))
                #expect(report.failures.first { $0.url.hasSuffix("cesium.jpg") }?.reason == "http-status")
                #expect(origin.statistics.requests == 2)
            }
        }
    }

    @Test("on a terminal the progress line goes to stderr; stdout holds only the report")
    func progressOnStderr() async throws {
        try await withTemporaryDirectory { cache in
            try await withOrigin { origin in
                var (console, captured) = Console.capturing()
                console.errIsTerminal = true
                let code = await Console.$current.withValue(console) {
                    await TileCacheCommand.run(arguments: arguments(origin, cache: cache, "--elements", "1-5", "--kind", "thumbnails"))
                }
                #expect(code == 0)
                #expect(captured.err.contains("5/5") && captured.err.contains("ETA"))
                #expect(!captured.out.contains("ETA") && !captured.out.contains("\r"))
                let report = try decode(CLIJSON.Prefetch.self, from: captured.out)
                #expect(report.succeeded == 5)
            }
        }
    }

    @Test("a --disk-bytes limit that evicts images stored in the run says so, with the count, in the JSON warnings and the text report")
    func evictionWarning() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let run = await tilecache(arguments(origin, cache: directory + "/json", "--elements", "1-20", "--kind", "thumbnails",
                                                    "--disk-bytes", "50KiB"))
                let text = await tilecache(["prefetch", "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase,
                                            "--cache-dir", directory + "/text", "--elements", "1-20", "--kind", "thumbnails",
                                            "--disk-bytes", "50KiB"])
                #expect(run.code == 0, "\(run.err)")
                let report = try run.decoded(as: PrefetchReport.self)
                let kept = try FileManager.default.contentsOfDirectory(atPath: directory + "/json/entries").filter { $0.hasSuffix(".tce") }.count
                #expect(report.succeeded == 20 && kept > 0 && kept < 20)
                let warning = "the disk cache's limit (50 KiB) evicted \(20 - kept) images this run: they will be downloaded again; raise --disk-bytes"
                #expect(report.warnings == [warning], "\(report.warnings)")
                #expect(text.code == 0 && text.out.contains("warning: the disk cache's limit (50 KiB) evicted "), "\(text.out)")
                // A limit that holds everything warns of nothing.
                let roomy = await tilecache(arguments(origin, cache: directory + "/roomy", "--elements", "1-20", "--kind", "thumbnails"))
                #expect(try roomy.decoded(as: PrefetchReport.self).warnings.isEmpty)
            }
        }
    }

    @Test("a negative number after -j or --concurrency is refused with the option's range, not as a missing value",
          arguments: [["prefetch", "-j", "-3"], ["prefetch", "--concurrency", "-3"], ["validate", "-j", "-3"]])
    func negativeConcurrency(arguments: [String]) async {
        let run = await tilecache(arguments + ["--no-disk-cache", "--elements", "1"])
        #expect(run.code == 1)
        #expect(run.err.contains("--concurrency must be 1...256, got -3") && !run.err.contains("Missing value"), "\(run.err)")
        #expect(run.out.isEmpty)
    }

    @Test("--dry-run lists the URLs a prefetch would fetch and fetches nothing")
    func dryRun() async throws {
        let run = await tilecache("prefetch", "--dry-run", "--elements", "89-91", "--tiles-base", "http://t.example/pt")
        #expect(run.code == 0)
        #expect(run.out.split(separator: "\n") == ["http://t.example/pt/Tiles/089/s7.JPG", "http://images-of-elements.com/actinium.jpg",
                                                   "http://t.example/pt/Tiles/090/s7.JPG", "http://t.example/pt/Tiles/091/s7.JPG"])
    }

    @Test("bad option values exit 1 with a message naming the input", arguments: [
        (["--memory-bytes", "10parsecs"], "10parsecs"), (["--elements", "1-200"], "1-200"), (["--elements", "Kryptonite"], "Kryptonite"),
        (["--concurrency", "0"], "--concurrency"), (["--kind", "huge"], "huge"), (["--tiles-base", "ftp://x"], "ftp://x"),
        (["--urls", "/no/such/list.txt"], "/no/such/list.txt"), (["--repeat", "0"], "--repeat"),
    ])
    func badOptions(extra: [String], mentions: String) async {
        let run = await tilecache(["prefetch", "--cache-dir", "/tmp/unused-tilecache-test"] + extra)
        #expect(run.code == 1)
        #expect(run.err.contains(mentions), "\(run.err)")
        #expect(run.out.isEmpty)
    }
}

@Suite("tilecache origin", .timeLimit(.minutes(5)), .heavy)
struct OriginCommandTests {
    @Test("prints both base URLs, serves images, and stops when its task is cancelled")
    func runsAndStops() async throws {
        let (console, captured) = Console.capturing()
        let task = Task {
            await Console.$current.withValue(console) { await TileCacheCommand.run(arguments: ["origin", "--latency-ms", "5"]) }
        }
        try await waitUntil("the origin prints its base URLs") { captured.out.contains("--images-base") }
        let tilesBase = try #require(captured.out.split(separator: "\n").first { $0.hasPrefix("--tiles-base ") }).dropFirst(13)
        let response = try await TransferEngine().perform(TransferRequest(url: tilesBase + "/Tiles/001/s7.JPG"))
        #expect(response.status == 200 && ImageFormat.sniff(response.body) == .jpeg)
        task.cancel()
        #expect(await task.value == 0)
        #expect(captured.err.contains("served 1 requests"))
    }

    @Test("an unknown fault profile or rule is a usage error")
    func badFaults() async {
        let profile = await tilecache("origin", "--faults", "chaos")
        #expect(profile.code == 1 && profile.err.contains("chaos"))
        let rule = await tilecache("origin", "--fault", "/x=teapot")
        #expect(rule.code == 1 && rule.err.contains("teapot"))
    }
}

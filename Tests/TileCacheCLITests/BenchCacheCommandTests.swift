import Catalogue
import Foundation
import ImageCore
import Testing
import TestSupport
import TileCacheOrigin

@Suite("tilecache bench-cache", .timeLimit(.minutes(5)), .heavy)
struct BenchCacheCommandTests {
    @Test("JSON: requests and one result per policy and size, null for the unlimited axis; deterministic for a seed")
    func json() async throws {
        let arguments = ["bench-cache", "--pattern", "zipf", "--requests", "20000", "--counts", "10,100", "--bytes", "4MiB",
                         "--combined", "50:2MiB", "--cache-dir", "/nonexistent", "--format", "json", "--seed", "9"]
        let run = await tilecache(arguments)
        #expect(run.code == 0, "\(run.err)")
        let report = try run.decoded(as: BenchCacheOutput.self)
        #expect(report.requests == 20000)
        let results = report.results
        #expect(results.count == 5 * 4)
        #expect(Set(results.map(\.policy)) == ["lru", "tinylfu", "fifo", "sieve", "belady"])
        // Every result has exactly these keys, a limit not set among them as null.
        let raw = try #require(try run.decoded(as: JSONValue.self)["results"])
        for object in raw.array ?? [] {
            #expect(object.keys == ["policy", "countLimit", "byteLimit", "hits", "hitRate", "byteHitRate"])
        }
        for result in results {
            #expect(!(result.countLimit == nil && result.byteLimit == nil))
            #expect(result.hitRate > 0 && result.hitRate < 1 && abs(result.hitRate - Double(result.hits) / 20000) < 1e-9)
        }
        #expect(results.filter { $0.countLimit == 50 && $0.byteLimit == 2 << 20 }.count == 5)
        let again = await tilecache(arguments)
        #expect(try again.decoded(as: JSONValue.self)["results"] == raw)
    }

    @Test("sizes come from decoding the disk cache's images through the pipeline, which changes nothing there")
    func sizesFromDiskCache() async throws {
        try await withTemporaryDirectory { cache in
            try await withOrigin { origin in
                let prefetch = await tilecache(["prefetch", "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase,
                                                "--elements", "1-3", "--cache-dir", cache, "--format", "json"])
                #expect(prefetch.code == 0, "\(prefetch.err)")
                let entries = cache + "/entries"
                func listing() throws -> [String: Date] {
                    try Dictionary(uniqueKeysWithValues: FileManager.default.contentsOfDirectory(atPath: entries).map { name in
                        (name, try FileManager.default.attributesOfItem(atPath: entries + "/" + name)[.modificationDate] as? Date ?? .distantPast)
                    })
                }
                let before = try listing()
                let requestsBefore = origin.statistics.requests
                let run = await tilecache(["bench-cache", "--pattern", "uniform", "--requests", "1000", "--counts", "10", "--bytes", "none",
                                           "--combined", "none", "--cache-dir", cache, "--format", "json"])
                #expect(run.code == 0, "\(run.err)")
                let sizesFrom = try run.decoded(as: BenchCacheOutput.self).sizesFrom
                #expect(sizesFrom.hasPrefix("6 images decoded from the disk cache at \(cache)"), "\(sizesFrom)")
                #expect(try listing() == before)
                #expect(origin.statistics.requests == requestsBefore)  // the caches only: nothing downloaded
            }
        }
    }

    @Test("table, target line and an SVG plot with one line per policy")
    func tableAndPlot() async throws {
        try await withTemporaryDirectory { directory in
            let plot = directory + "/rates.svg"
            let run = await tilecache(["bench-cache", "--pattern", "scroll", "--requests", "5000", "--cache-dir", "/nonexistent",
                                       "--target", "0.5", "--plot", plot])
            #expect(run.code == 0, "\(run.err)")
            #expect(run.out.contains("trace: scroll, 5000 accesses of 118 images"))
            #expect(run.out.contains("smallest size reaching a 50.0% hit rate:") && run.out.contains("  lru: "))
            let svg = try String(contentsOfFile: plot, encoding: .utf8)
            #expect(svg.hasPrefix("<svg") && svg.components(separatedBy: "<polyline").count - 1 == 10)  // 5 policies x 2 panels
            #expect(svg.contains("LRU (TileCache MemoryCache)") && svg.contains("W-TinyLFU (TileCache MemoryCache)") && svg.contains("target 50%"))
        }
    }

    @Test("--plot to a name that is not .svg is refused before the replay, naming the path and what is written; nothing is written",
          arguments: ["rates.png", "rates.jpg", "rates"])
    func plotExtension(name: String) async throws {
        try await withTemporaryDirectory { directory in
            let plot = directory + "/" + name
            let run = await tilecache(["bench-cache", "--pattern", "uniform", "--requests", "1000", "--cache-dir", "/nonexistent", "--plot", plot])
            #expect(run.code == 1)
            #expect(run.err.contains("--plot \(plot): the plot is SVG only") && run.err.contains("give a name ending in .svg, e.g. rates.svg"), "\(run.err)")
            #expect(run.out.isEmpty && !FileManager.default.fileExists(atPath: plot))
            let upper = await tilecache(["bench-cache", "--pattern", "uniform", "--requests", "1000", "--counts", "10", "--bytes", "none",
                                         "--combined", "none", "--cache-dir", "/nonexistent", "--plot", directory + "/rates.SVG"])
            #expect(upper.code == 0, "\(upper.err)")
            let svg = try String(contentsOfFile: directory + "/rates.SVG", encoding: .utf8)
            #expect(svg.hasPrefix("<svg"))
        }
    }

    @Test("a recorded trace file replays; elements and URLs both work")
    func traceFile() async throws {
        try await withTemporaryDirectory { directory in
            let builder = ImageURLBuilder()
            let gold = builder.fullImageURL(for: ElementCatalogue.standard.element(number: 79)!)
            try "# recorded\nFe\n\(gold)\nFe\n\(gold)\n".write(toFile: directory + "/t.txt", atomically: true, encoding: .utf8)
            let run = await tilecache(["bench-cache", "--trace", directory + "/t.txt", "--counts", "1,2", "--bytes", "none", "--combined", "none",
                                       "--policies", "lru,belady", "--cache-dir", "/nonexistent", "--format", "json"])
            #expect(run.code == 0, "\(run.err)")
            let results = try run.decoded(as: BenchCacheOutput.self).results
            // Fe gold Fe gold: one entry thrashes under LRU (0 hits); MIN keeps one of them (1 hit); two entries hit twice.
            #expect(results.map(\.hits) == [0, 1, 2, 2])
        }
    }

    @Test("bad input exits 1 naming the input", arguments: [
        (["--counts", "0"], "'0'"), (["--bytes", "10parsecs"], "10parsecs"), (["--policies", "lru,mru"], "mru"),
        (["--target", "1.5"], "--target"), (["--trace", "/no/such/trace.txt"], "/no/such/trace.txt"),
        (["--counts", "none", "--bytes", "none", "--combined", "none"], "nothing to measure"), (["--combined", "100"], "COUNT:BYTES"), (["--pattern", "spiral"], "spiral"),
        (["--requests", "-5"], "--requests must be 1...50000000, got -5"), (["--exponent", "-0.5"], "--exponent must be more than 0 and at most 10, got -0.5"),
    ])
    func badInput(extra: [String], mentions: String) async {
        let run = await tilecache(["bench-cache", "--cache-dir", "/nonexistent"] + extra)
        #expect(run.code == 1)
        #expect(run.err.contains(mentions), "\(run.err)")
    }

    @Test("a trace from Windows (CRLF, a byte-order mark, comments after entries) replays as written")
    func windowsTrace() async throws {
        try await withTemporaryDirectory { directory in
            let gold = ImageURLBuilder().fullImageURL(for: ElementCatalogue.standard.element(number: 79)!)
            let text = "# recorded\r\nFe  # iron\r\n\(gold)\r\nFe\r\n\(gold)\r\n"
            try Data([0xEF, 0xBB, 0xBF] + Array(text.utf8)).write(to: URL(fileURLWithPath: directory + "/t.txt"))
            let run = await tilecache(["bench-cache", "--trace", directory + "/t.txt", "--counts", "1,2", "--bytes", "none", "--combined", "none",
                                       "--policies", "lru,belady", "--cache-dir", "/nonexistent", "--format", "json"])
            #expect(run.code == 0, "\(run.err)")
            let results = try run.decoded(as: BenchCacheOutput.self).results
            #expect(results.map(\.hits) == [0, 1, 2, 2])
        }
    }

    @Test("a trace line that is neither URL nor element is named with its line number")
    func badTraceLine() async throws {
        try await withTemporaryDirectory { directory in
            try "Fe\nunobtainium\n".write(toFile: directory + "/t.txt", atomically: true, encoding: .utf8)
            let run = await tilecache(["bench-cache", "--trace", directory + "/t.txt", "--cache-dir", "/nonexistent"])
            #expect(run.code == 1 && run.err.contains("t.txt:2: 'unobtainium'"), "\(run.err)")
        }
    }
}

/// A client's model of `bench-cache --format json` (docs/cli.md, `tilecache bench-cache`), not the command's own type.
private struct BenchCacheOutput: Decodable {
    /// One policy at one size.
    struct Result: Decodable {
        var policy: String
        /// Nil (`null`) when the count is not limited.
        var countLimit: Int?
        /// Nil (`null`) when the bytes are not limited.
        var byteLimit: Int?
        var hits: Int
        var hitRate: Double
        var byteHitRate: Double
    }

    var trace: String
    var requests: Int
    var distinctImages: Int
    var footprintBytes: Int
    var sizesFrom: String
    /// Nil for a `--trace` file.
    var seed: Int?
    var results: [Result]
    var target: Double
    var replaySeconds: Double
}

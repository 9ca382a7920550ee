import Foundation
import ImageCore
import Testing
import TileCacheCLI
import TestSupport
import TileCacheOrigin

/// No command reports success for work it did not do: a cache directory it cannot use, a list with nothing in it, an
/// option that would be ignored, a runtime failure dressed as a usage error.
@Suite("no false success", .timeLimit(.minutes(5)), .heavy)
struct NoFalseSuccessTests {
    func catalogue(_ origin: OriginServer, _ extra: String...) -> [String] {
        ["--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase] + extra
    }

    @Test("an empty or blank --cache-dir is a usage error for every command that has one, and nothing is created",
          arguments: ["", "   "])
    func blankCacheDirectory(blank: String) async {
        for command in [["prefetch", "--elements", "1"], ["validate", "--elements", "1", "--store"], ["serve"], ["stats"],
                        ["clear", "--yes"], ["bench-cache", "--requests", "10"]] {
            let run = await tilecache(command + ["--cache-dir", blank])
            #expect(run.code == 1, "\(command)")
            #expect(run.err.contains("--cache-dir '\(blank)' is empty: give a directory"), "\(command): \(run.err)")
        }
        for leftover in ["/entries", "/.lock", "/runs.jsonl"] { #expect(!FileManager.default.fileExists(atPath: leftover)) }
    }

    @Test("TILECACHE_CACHE_DIR set but empty is a usage error too (a real process, for its own environment)")
    func emptyEnvironmentVariable() async throws {
        try await withTemporaryDirectory { directory in
            for command in [["prefetch", "--elements", "1"], ["stats"]] {
                let run = try await ChildProcess.run(command, environment: ["TILECACHE_CACHE_DIR": ""], directory: directory)
                #expect(run.code == 1, "\(command)")
                #expect(run.err.contains("TILECACHE_CACHE_DIR is set but empty"), "\(command): \(run.err)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        }
    }

    @Test("prefetch, validate --store and serve refuse a cache directory they cannot use, naming it and why")
    func unusableCacheDirectory() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let file = directory + "/a-file"
                try Data("not a directory".utf8).write(to: URL(fileURLWithPath: file))
                for cache in [file, file + "/cache"] {
                    for command in [["prefetch", "--elements", "1"], ["validate", "--elements", "1", "--store"],
                                    ["serve", "--port", "0", "--db", directory + "/f.sqlite"]] {
                        let run = await tilecache(command + catalogue(origin, "--cache-dir", cache))
                        #expect(run.code == 1, "\(command) \(cache)")
                        #expect(run.err.contains("\(cache): cannot use it as the disk cache: cannot create the cache directory: \(file) is not a directory"),
                                "\(command): \(run.err)")
                        #expect(run.err.contains("--no-disk-cache") && !run.err.contains("Usage:"), "\(command)")
                        #expect(run.out.isEmpty, "\(command): nothing is reported as done")
                    }
                }
                #expect(origin.statistics.requests == 0, "nothing was fetched")
                // Asked for explicitly, running without a disk cache is fine, and leaves nothing on disk.
                let memoryOnly = await tilecache(["prefetch", "--elements", "1", "--no-disk-cache", "--cache-dir", directory + "/unused"]
                                                 + catalogue(origin, "--format", "json"))
                #expect(memoryOnly.code == 0, "\(memoryOnly.err)")
                #expect(try memoryOnly.decoded(as: CLIJSON.Prefetch.self).succeeded == 2)
                #expect(!FileManager.default.fileExists(atPath: directory + "/unused"))
                let contradiction = await tilecache("validate", "--store", "--no-disk-cache", "--elements", "1")
                #expect(contradiction.code == 1 && contradiction.err.contains("--store needs the disk cache"))
            }
        }
    }

    @Test("a read-only file system is refused at the start, naming the reason",
          .enabled(if: SmallFileSystem.canMount, "mounting a tmpfs needs root with CAP_SYS_ADMIN"))
    func readOnlyFileSystem() async throws {
        try await SmallFileSystem.with(kilobytes: 256) { mountPoint in
            try SmallFileSystem.remount(mountPoint, kilobytes: 256, readOnly: true)
            try await withOrigin { origin in
                let run = await tilecache(["prefetch", "--elements", "1", "--cache-dir", mountPoint + "/cache"] + catalogue(origin))
                #expect(run.code == 1 && run.err.contains("\(mountPoint)/cache: cannot use it as the disk cache"))
                #expect(run.err.contains("Read-only file system"), "\(run.err)")
            }
        }
    }

    @Test("a disk that fills up during a prefetch: the report says what was not stored, and the exit code is 1",
          .enabled(if: SmallFileSystem.canMount, "mounting a tmpfs needs root with CAP_SYS_ADMIN"))
    func fullDisk() async throws {
        try await SmallFileSystem.with(kilobytes: 128) { mountPoint in
            try await withOrigin { origin in
                let cache = mountPoint + "/cache"
                let run = await tilecache(["prefetch", "--elements", "1-40", "--kind", "thumbnails", "--cache-dir", cache, "--format", "json"]
                                          + catalogue(origin))
                #expect(run.code == 1)
                #expect(run.err.contains("\(cache): the warm-up is incomplete: ") && run.err.contains("images not stored: No space left on device"),
                        "\(run.err)")
                let report = try run.decoded(as: CLIJSON.Prefetch.self)
                #expect(report.succeeded == 40)
                let warnings = report.warnings
                #expect(warnings.contains { $0.contains("images not stored: the file system refused writes to \(cache) (No space left on device)") })
            }
        }
    }

    @Test("a disk limit smaller than any image: the report warns that nothing could be stored")
    func diskLimitTooSmall() async throws {
        try await withTemporaryDirectory { cache in
            try await withOrigin { origin in
                let json = await tilecache(["prefetch", "--elements", "1-3", "--kind", "thumbnails", "--disk-bytes", "1KB", "--cache-dir", cache,
                                            "--format", "json"] + catalogue(origin))
                let table = await tilecache(["prefetch", "--elements", "1-3", "--kind", "thumbnails", "--disk-bytes", "1KB", "--cache-dir", cache]
                                            + catalogue(origin))
                #expect(json.code == 0)
                let warnings = try json.decoded(as: CLIJSON.Prefetch.self).warnings
                #expect(warnings.count == 1)
                #expect(warnings.first?.hasPrefix("nothing could be stored: the disk limit (--disk-bytes), 1000 B, is smaller than the smallest image, ") == true,
                        "\(warnings)")
                #expect(table.out.contains("warning: nothing could be stored"))
                #expect(DiskCacheEntries.count(in: cache) == 0)
            }
        }
    }

    @Test("an empty URL list, or one of only comments, is nothing to check: exit code 1, unless --allow-empty")
    func emptyLists() async throws {
        try await withTemporaryDirectory { directory in
            try Data().write(to: URL(fileURLWithPath: directory + "/empty.txt"))
            try Data("# all commented out\r\n\r\n  # http://x/a.jpg\r\n".utf8).write(to: URL(fileURLWithPath: directory + "/comments.txt"))
            for list in ["empty.txt", "comments.txt"] {
                for command in ["prefetch", "validate"] {
                    let run = await tilecache(command, "--urls", directory + "/" + list, "--cache-dir", directory + "/cache")
                    #expect(run.code == 1 && run.out.isEmpty, "\(command) \(list)")
                    #expect(run.err.contains("nothing to check: \(directory)/\(list) lists no URLs"), "\(run.err)")
                    #expect(run.err.contains("--allow-empty") && !run.err.contains("Usage:"))
                    let allowed = await tilecache(command, "--urls", directory + "/" + list, "--allow-empty", "--cache-dir", directory + "/cache",
                                                  "--format", "json")
                    #expect(allowed.code == 0, "\(command) \(list): \(allowed.err)")
                }
            }
        }
    }

    @Test("--urls with a catalogue option is refused, naming the option that would be ignored")
    func urlsWithCatalogueOptions() async throws {
        try await withTemporaryDirectory { directory in
            try "http://127.0.0.1:9/a.jpg\n".write(toFile: directory + "/list.txt", atomically: true, encoding: .utf8)
            let list = directory + "/list.txt"
            let elements = await tilecache("validate", "--urls", list, "--elements", "1-3")
            #expect(elements.code == 1 && elements.err.contains("--urls replaces the catalogue, so --elements would be ignored"))
            let several = await tilecache("prefetch", "--urls", list, "--kind", "full", "--tiles-base", "http://127.0.0.1:9")
            #expect(several.code == 1 && several.err.contains("so --kind, --tiles-base would be ignored"), "\(several.err)")
            let knownMissing = await tilecache("prefetch", "--urls", list, "--include-known-missing")
            #expect(knownMissing.code == 1 && knownMissing.err.contains("--include-known-missing applies to the catalogue"))
        }
    }

    @Test("runtime failures say what failed, never 'Usage:': a port in use, a database, a plot file")
    func runtimeFailures() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let taken = await tilecache(["serve", "--port", "\(origin.port)", "--cache-dir", directory + "/cache", "--db", directory + "/f.sqlite"]
                                            + catalogue(origin))
                #expect(taken.code == 1 && taken.err.contains("127.0.0.1:\(origin.port) is already in use"), "\(taken.err)")
                #expect(!taken.err.contains("Usage:") && !taken.err.contains("bind(descriptor"))
                let originTaken = await tilecache("origin", "--port", "\(origin.port)")
                #expect(originTaken.code == 1 && originTaken.err.contains("127.0.0.1:\(origin.port) is already in use"), "\(originTaken.err)")

                try Data("x".utf8).write(to: URL(fileURLWithPath: directory + "/file"))
                let database = await tilecache("serve", "--port", "0", "--cache-dir", directory + "/cache", "--db", directory + "/file/favorites.sqlite")
                #expect(database.code == 1 && !database.err.contains("Usage:"))
                #expect(database.err.contains("cannot open the favourites database \(directory)/file/favorites.sqlite: \(directory)/file is not a directory"),
                        "\(database.err)")

                let plot = await tilecache("bench-cache", "--requests", "50", "--counts", "5", "--bytes", "none", "--combined", "none",
                                           "--cache-dir", directory + "/cache", "--plot", directory + "/file/plot.svg")
                #expect(plot.code == 1 && plot.err.contains("--plot: cannot write \(directory)/file/plot.svg: Not a directory"), "\(plot.err)")
                #expect(!plot.err.contains("Usage:"))
            }
        }
    }
}

/// Entry files in a disk cache directory.
enum DiskCacheEntries {
    static func count(in cache: String) -> Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: cache + "/entries")) ?? []).filter { $0.hasSuffix(".tce") }.count
    }
}

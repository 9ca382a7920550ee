import Foundation
import ImageCore
import Testing
import TestSupport

/// The disk cache's shared index (SQLite beside the entries): kept in step with the directory, repaired at open.
@Suite("DiskCache index", .timeLimit(.minutes(5)), .heavy)
struct DiskCacheIndexTests {
    func store(_ cache: DiskCache, _ urls: [String]) async throws {
        let bytes = Fixtures.thumbnailJPEG
        for url in urls { #expect(try await cache.store(bytes, metadata: DiskCacheMetadata.fixture(url, bytes))) }
    }

    /// The size of one entry file of the fixture under a URL as long as "http://x/0.jpg" (give or take a byte: the
    /// metadata's time varies), measured in a cache of its own under `directory`.
    func entrySize(_ directory: String) async throws -> Int {
        let probe = try DiskCache(directory: directory + "/probe")
        try await store(probe, ["http://x/probe"])
        return await probe.totalBytes
    }

    /// The total size of the entry files in `directory`.
    func entryBytes(_ directory: String) throws -> Int {
        try entryFiles(directory).reduce(0) { total, name in
            let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/entries/" + name)
            return total + ((attributes[.size] as? Int) ?? 0)
        }
    }

    func entryFiles(_ directory: String) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory + "/entries").filter { $0.hasSuffix(".tce") })
    }

    @Test("opening repairs what a crash or a hand left: files without rows are indexed, rows without files dropped")
    func reconcileAtOpen() async throws {
        try await withTemporaryDirectory { directory in
            let urls = (0..<6).map { "http://x/\($0).jpg" }
            let cache = try DiskCache(directory: directory)
            try await store(cache, urls)
            // A file the index never heard of (a writer killed between its rename and its commit) ...
            let stray = directory + "/entries/" + String(repeating: "ab", count: 32) + ".tce"
            try FileManager.default.copyItem(atPath: cache.path(for: urls[0]), toPath: stray)
            // ... and rows whose files are gone (removed by hand, or an eviction killed before its commit).
            try FileManager.default.removeItem(atPath: cache.path(for: urls[1]))
            try FileManager.default.removeItem(atPath: cache.path(for: urls[2]))
            #expect(await cache.count == 6, "the open cache does not rescan")

            let reopened = try DiskCache(directory: directory)
            let bytesAfterOpen = try entryBytes(directory)
            #expect(await reopened.count == 5)
            #expect(await reopened.totalBytes == bytesAfterOpen)
            #expect(await reopened.entry(for: urls[1]) == nil)
            #expect(await reopened.entry(for: urls[3]) != nil)

            // A read that finds a row's file missing drops the row, so the totals stay true without reopening.
            try FileManager.default.removeItem(atPath: reopened.path(for: urls[4]))
            #expect(await reopened.entry(for: urls[4]) == nil)
            let bytesAfterRead = try entryBytes(directory)
            #expect(await reopened.count == 4)
            #expect(await reopened.totalBytes == bytesAfterRead)
        }
    }

    @Test("a cache without an index (made before it) or with a damaged one is indexed from its files at open")
    func rebuild() async throws {
        try await withTemporaryDirectory { directory in
            let urls = (0..<5).map { "http://x/\($0).jpg" }
            do {
                let cache = try DiskCache(directory: directory)
                try await store(cache, urls)
            }
            let index = directory + "/" + DiskCache.indexFileName
            try FileManager.default.removeItem(atPath: index)
            do {
                let fromFiles = try DiskCache(directory: directory)
                #expect(await fromFiles.count == 5)
                for url in urls { #expect(await fromFiles.entry(for: url) != nil, "\(url)") }
            }

            let log = CapturedLog()
            try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: index))
            let repaired = try DiskCache(directory: directory, logger: log.logger)
            #expect(await repaired.count == 5)
            #expect(log.warnings.map(\.text) == ["the cache index is damaged: set aside and rebuilt from the entries"])
            #expect(FileManager.default.fileExists(atPath: index + ".damaged"))
        }
    }

    @Test("eviction follows the access times of hits in this process and of another process that wrote since")
    func evictionOrderAcrossProcesses() async throws {
        try await withTemporaryDirectory { directory in
            let bytes = Fixtures.thumbnailJPEG
            let entrySize = try await entrySize(directory)
            let limit = entrySize * 4 + entrySize / 2
            let first = try DiskCache(directory: directory + "/main", sizeLimit: limit)
            let second = try DiskCache(directory: directory + "/main", sizeLimit: limit)
            try await store(first, (0..<4).map { "http://x/\($0).jpg" })
            // The second cache reads entry 0: its access time is recorded in the index with that cache's next write.
            #expect(await second.entry(for: "http://x/0.jpg") != nil)
            #expect(try await second.store(bytes, metadata: .fixture("http://x/4.jpg", bytes)))
            // Entry 1 was the least recently used, not entry 0.
            #expect(await first.entry(for: "http://x/0.jpg") != nil)
            #expect(await first.entry(for: "http://x/1.jpg") == nil)
            let files = try entryFiles(directory + "/main")
            #expect(await first.count == 4 && files.count == 4)
        }
    }

    @Test("the index's count and bytes equal the directory's after many writes, evictions and removals from two caches")
    func totalsStayTrue() async throws {
        try await withTemporaryDirectory { directory in
            let bytes = Fixtures.thumbnailJPEG
            let entrySize = try await entrySize(directory)
            let caches = try (0..<2).map { _ in try DiskCache(directory: directory + "/main", sizeLimit: entrySize * 30) }
            await withTaskGroup(of: Void.self) { group in
                for (number, cache) in caches.enumerated() {
                    group.addTask {
                        for index in 0..<150 {
                            let url = "http://x/\((index * 7 + number) % 60).jpg"
                            _ = try? await cache.store(bytes, metadata: .fixture(url, bytes))
                            if index % 5 == 0 { await cache.remove("http://x/\((index + 3) % 60).jpg") }
                            _ = await cache.entry(for: "http://x/\(index % 60).jpg")
                        }
                    }
                }
            }
            let files = try entryFiles(directory + "/main")
            let fileBytes = try entryBytes(directory + "/main")
            #expect(files.count > 10)
            for cache in caches {
                #expect(await cache.count == files.count)
                #expect(await cache.totalBytes == fileBytes)
                #expect(await cache.totalBytes <= cache.sizeLimit)
            }
        }
    }

    /// Runs `sql` on the index file with Python's sqlite3 (another SQLite client, as another process would be).
    func sqlite(_ path: String, _ sql: String) async throws {
        try await runPythonClient("sqlite_script.py", [path, sql])
    }

    @Test("after a writer ended without releasing the cache (killed), the next open corrects every row's size to its file's")
    func uncleanWriterSizes() async throws {
        try await withTemporaryDirectory { directory in
            let url = "http://x/0.jpg"
            do {
                let cache = try DiskCache(directory: directory + "/main")
                try await store(cache, [url, "http://x/1.jpg"])
                // The same URL stored elsewhere with other bytes: a file of another size, as a rename that its
                // writer did not live to commit would leave.
                let other = try DiskCache(directory: directory + "/other")
                let bytes = Fixtures.grayJPEG
                #expect(try await other.store(bytes, metadata: .fixture(url, bytes)))
                try FileManager.default.removeItem(atPath: cache.path(for: url))
                try FileManager.default.copyItem(atPath: other.path(for: url), toPath: cache.path(for: url))
            }
            let index = directory + "/main/" + DiskCache.indexFileName
            let bytesOnDisk = try entryBytes(directory + "/main")
            do {
                let clean = try DiskCache(directory: directory + "/main")
                #expect(await clean.totalBytes != bytesOnDisk, "after clean releases, sizes are not checked (no stat per entry)")
            }
            try await sqlite(index, "INSERT INTO writer (pid, opens) VALUES (\(Int32.max - 1), 1)")  // a process that is gone
            let reopened = try DiskCache(directory: directory + "/main")
            #expect(await reopened.totalBytes == bytesOnDisk)
            #expect(await reopened.count == 2)
            #expect(await reopened.entry(for: url)?.bytes == Fixtures.grayJPEG)
        }
    }

    @Test("an index of a newer schema version is refused, naming it, and left in place (never rebuilt over)")
    func newerIndexVersion() async throws {
        try await withTemporaryDirectory { directory in
            do { try await store(try DiskCache(directory: directory), ["http://x/0.jpg"]) }
            let index = directory + "/" + DiskCache.indexFileName
            try await sqlite(index, "PRAGMA user_version = 2")
            let error = #expect(throws: ImageCoreError.self) { try DiskCache(directory: directory) }
            #expect(error?.subject == index && error?.message.contains("schema version 2, written by a newer tilecache") == true,
                    "\(String(describing: error))")
            #expect(!FileManager.default.fileExists(atPath: index + ".damaged"))
        }
    }
}

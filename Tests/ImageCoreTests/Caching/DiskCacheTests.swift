import Foundation
import ImageCore
import Testing
import TestSupport

@Suite("DiskCache", .timeLimit(.minutes(5)))
struct DiskCacheTests {
    func metadata(_ url: String, _ bytes: [UInt8], etag: String? = "\"e1\"") throws -> DiskCacheMetadata {
        try DiskCacheMetadata.fixture(url, bytes, etag: etag)
    }

    @Test("stores bytes and metadata, and a new instance (a restart) reads them back")
    func roundTrip() async throws {
        try await withTemporaryDirectory { directory in
            let url = "http://example.com/../../etc/passwd?x=1"
            let bytes = Fixtures.thumbnailJPEG
            do {
                let cache = try DiskCache(directory: directory)
                #expect(try await cache.store(bytes, metadata: metadata(url, bytes)))
            }
            let reopened = try DiskCache(directory: directory)
            #expect(await reopened.count == 1)
            let entry = try #require(await reopened.entry(for: url))
            #expect(entry.bytes == bytes)
            #expect(entry.metadata.url == url && entry.metadata.etag == "\"e1\"" && entry.metadata.maxAgeSeconds == 60)
            #expect(entry.metadata.format == .jpeg && entry.metadata.byteCount == bytes.count)
            let name = (reopened.path(for: url) as NSString).lastPathComponent
            #expect(name.count == 64 + 4 && name.allSatisfy { $0.isHexDigit || $0 == "." || $0 == "t" || $0 == "c" || $0 == "e" })
            #expect(reopened.path(for: url).hasPrefix(directory + "/entries/"))
            #expect(await reopened.entry(for: "http://example.com/other.jpg") == nil)
        }
    }

    @Test("opened to read only, a cache changes nothing: no lock, no cleanup, no access times, no removals; writes are refused")
    func readingOnly() async throws {
        try await withTemporaryDirectory { directory in
            let url = "http://example.com/a.jpg", damagedURL = "http://example.com/damaged.jpg"
            let bytes = Fixtures.thumbnailJPEG
            do {
                let cache = try DiskCache(directory: directory)
                #expect(try await cache.store(bytes, metadata: metadata(url, bytes)))
                #expect(try await cache.store(bytes, metadata: metadata(damagedURL, bytes)))
            }
            try? FileManager.default.removeItem(atPath: directory + "/.lock")
            let dead = directory + "/entries/.tmp-\(Int32.max - 1)-123"
            _ = FileManager.default.createFile(atPath: dead, contents: Data([1, 2, 3]))
            let writable = try DiskCache(directory: directory)
            let damaged = writable.path(for: damagedURL)
            var file = try Data(contentsOf: URL(fileURLWithPath: damaged))
            file[file.count - 1] ^= 0xFF
            try file.write(to: URL(fileURLWithPath: damaged))
            // An access time an hour ahead: a touch (now) would show, and reading alone does not move it (relatime
            // updates only an access time older than the modification time or a day).
            let ahead = Int(Date().timeIntervalSince1970) + 3600
            var times = [timespec(tv_sec: ahead, tv_nsec: 0), timespec(tv_sec: 0, tv_nsec: (1 << 30) - 2)]
            #expect(utimensat(AT_FDCWD, writable.path(for: url), &times, 0) == 0)
            try? FileManager.default.removeItem(atPath: directory + "/.lock")
            _ = FileManager.default.createFile(atPath: dead, contents: Data([1, 2, 3]))

            let reader = try DiskCache(readingOnly: directory)
            #expect(reader.isReadOnly)
            #expect(await reader.count == 2)
            #expect(await reader.allMetadata().count == 2)
            #expect(await reader.entry(for: url)?.bytes == bytes)
            #expect(await reader.entry(for: damagedURL) == nil)
            await reader.remove(url)
            await #expect(throws: ImageCoreError.self) { try await reader.store(bytes, metadata: metadata("http://example.com/b.jpg", bytes)) }
            await #expect(throws: ImageCoreError.self) { try await reader.rememberAlias("http://example.com/x.jpg", for: url) }
            await #expect(throws: ImageCoreError.self) { try await reader.removeAll() }
            var info = stat()
            #expect(stat(writable.path(for: url), &info) == 0 && info.st_atim.tv_sec == ahead)  // not touched
            #expect(FileManager.default.fileExists(atPath: damaged))  // not removed
            #expect(FileManager.default.fileExists(atPath: dead))  // not cleaned
            #expect(!FileManager.default.fileExists(atPath: directory + "/.lock"))  // not locked
            #expect(!FileManager.default.fileExists(atPath: directory + "/aliases.json"))
            #expect(throws: ImageCoreError.self) { try DiskCache(readingOnly: directory + "/nothing") }
        }
    }

    @Test("temp files of dead writers are removed at start; a live writer's are kept")
    func crashLeftovers() async throws {
        try await withTemporaryDirectory { directory in
            _ = try DiskCache(directory: directory)
            let dead = directory + "/entries/.tmp-\(Int32.max - 1)-123"
            let live = directory + "/entries/.tmp-1-456"  // pid 1 always exists
            _ = FileManager.default.createFile(atPath: dead, contents: Data([1, 2, 3]))
            _ = FileManager.default.createFile(atPath: live, contents: Data([1, 2, 3]))
            let cache = try DiskCache(directory: directory)
            #expect(!FileManager.default.fileExists(atPath: dead))
            #expect(FileManager.default.fileExists(atPath: live))
            #expect(await cache.count == 0)  // temp files are never entries
        }
    }

    @Test("a damaged entry is removed, counted and never served")
    func corruption() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory)
            let url = "http://example.com/a.jpg"
            try await cache.store(Fixtures.thumbnailJPEG, metadata: metadata(url, Fixtures.thumbnailJPEG))
            let path = cache.path(for: url)
            var file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            file[file.count - 100] ^= 0x55
            try Data(file).write(to: URL(fileURLWithPath: path))
            #expect(await cache.entry(for: url) == nil)
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(cache.statistics.damagedRemoved == 1)
            #expect(await cache.count == 0)
            // A file cut short (a torn write from outside the cache) is damage too.
            try await cache.store(Fixtures.thumbnailJPEG, metadata: metadata(url, Fixtures.thumbnailJPEG))
            try Data(file.prefix(50)).write(to: URL(fileURLWithPath: path))
            #expect(await cache.entry(for: url) == nil && cache.statistics.damagedRemoved == 2)
        }
    }

    @Test("the byte limit holds after every write, evicting the least recently used")
    func sizeLimit() async throws {
        try await withTemporaryDirectory { directory in
            let bytes = Fixtures.thumbnailJPEG
            let probe = try DiskCache(directory: directory + "/probe")
            try await probe.store(bytes, metadata: metadata("http://x/probe", bytes))
            let entrySize = await probe.totalBytes
            let cache = try DiskCache(directory: directory + "/main", sizeLimit: entrySize * 3 + entrySize / 2)
            let keep = "http://x/0.jpg"
            for index in 0..<10 {
                let url = "http://x/\(index).jpg"
                try await cache.store(bytes, metadata: metadata(url, bytes))
                #expect(await cache.totalBytes <= cache.sizeLimit)
                _ = await cache.entry(for: keep)  // keep entry await 0 recently used
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(await cache.count == 3)
            #expect(await cache.entry(for: keep) != nil)
            #expect(await cache.entry(for: "http://x/9.jpg") != nil)
            #expect(await cache.entry(for: "http://x/1.jpg") == nil)
            #expect(cache.statistics.evictions == 7)
            let onDisk = try FileManager.default.contentsOfDirectory(atPath: directory + "/main/entries").filter { $0.hasSuffix(".tce") }
            #expect(onDisk.count == 3)
            // Lowering the limit at open evicts at once.
            let smaller = try DiskCache(directory: directory + "/main", sizeLimit: entrySize + 10)
            #expect(await smaller.count == 1)
            #expect(await smaller.totalBytes <= entrySize + 10)
        }
    }

    @Test("an entry larger than the whole limit is not stored")
    func oversized() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory, sizeLimit: 1000)
            #expect(try await !cache.store(Fixtures.thumbnailJPEG, metadata: metadata("http://x/a", Fixtures.thumbnailJPEG)))
            #expect(await cache.count == 0)
        }
    }

    @Test("two caches on one directory writing at once leave it consistent and within the limit")
    func twoWriters() async throws {
        try await withTemporaryDirectory { directory in
            let bytes = Fixtures.thumbnailJPEG
            let limit = 12 * (bytes.count + 600)
            let first = try DiskCache(directory: directory, sizeLimit: limit)
            let second = try DiskCache(directory: directory, sizeLimit: limit)
            let meta = try metadata("http://x/template", bytes)
            await withTaskGroup(of: Void.self) { group in
                for (name, cache) in [("a", first), ("b", second)] {
                    group.addTask {
                        for index in 0..<40 {
                            var entry = meta
                            entry.url = "http://x/\(name)/\(index % 25).jpg"
                            _ = try? await cache.store(bytes, metadata: entry)
                            _ = await cache.entry(for: "http://x/\(name == "a" ? "b" : "a")/\(index % 25).jpg")
                        }
                    }
                }
            }
            let fresh = try DiskCache(directory: directory, sizeLimit: limit)
            #expect(await fresh.totalBytes <= limit)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory + "/entries")
            #expect(names.allSatisfy { !$0.hasPrefix(".tmp-") })
            var verified = 0
            for name in ["a", "b"] {
                for index in 0..<25 where await fresh.entry(for: "http://x/\(name)/\(index).jpg") != nil { verified += 1 }
            }
            #expect(await verified == fresh.count && verified > 0)
            #expect(fresh.statistics.damagedRemoved == 0)
        }
    }

    @Test("a directory that cannot be created fails with an error naming it")
    func unusableDirectory() {
        let error = #expect(throws: ImageCoreError.self) { try DiskCache(directory: "/dev/null/cache") }
        #expect(error?.reason == .io && error?.subject == "/dev/null/cache")
    }

    @Test("freshness follows max-age, no-cache and the default lifetime")
    func freshness() throws {
        var meta = try metadata("http://x/a", Fixtures.thumbnailJPEG)
        #expect(!meta.isStale(defaultLifetime: .seconds(0)))  // max-age=60 wins
        meta.storedAt = Date(timeIntervalSinceNow: -61)
        #expect(meta.isStale(defaultLifetime: .seconds(3600)))
        meta.maxAgeSeconds = nil
        #expect(!meta.isStale(defaultLifetime: .seconds(3600)))
        let noCache = DiskCacheMetadata(url: "u", header: ImageHeader(format: .jpeg, width: 1, height: 1, byteCount: 1), bytes: [1],
                                        contentType: nil, etag: nil, lastModified: nil, cacheControl: "no-cache")
        #expect(noCache.maxAgeSeconds == 0 && noCache.isStale(defaultLifetime: .seconds(3600)))
    }

    @Test("a path's parent directory, as deletingLastPathComponent gives it, also for one-character names")
    func parentDirectory() {
        let cases = [("a/b", "a"), ("/a", "/"), ("a", ""), ("c", ""), ("", ""), ("/", "/"), ("a/b/", "a"), ("/x/y/z", "/x/y"),
                     ("a//b", "a"), ("./c", ".")]
        for (path, parent) in cases { #expect(LocalDirectory.parent(of: path) == parent, "\(path)") }
    }
}

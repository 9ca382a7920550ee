import Catalogue
import Foundation
import ImageCore
import Testing
import TestSupport
import TileCacheOrigin
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The disk cache on a real file system that fills up or turns read-only (a small tmpfs).
@Suite("DiskCache on a full or read-only file system", .timeLimit(.minutes(5)), .heavy,
       .enabled(if: SmallFileSystem.canMount, "mounting a tmpfs needs root with CAP_SYS_ADMIN"))
struct DiskCacheFileSystemTests {
    /// A distinct valid thumbnail per element, with its metadata.
    func entry(_ number: Int) throws -> (url: String, bytes: [UInt8], metadata: DiskCacheMetadata) {
        let url = "http://tiles.test/\(number).jpg"
        let bytes = Fixtures.synthesizer.jpeg(ElementCatalogue.standard.element(number: number)!, kind: .thumbnail)
        return (url, bytes, try .fixture(url, bytes))
    }

    func tempFiles(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory + "/entries")) ?? []).filter { $0.hasPrefix(".tmp-") }
    }

    @Test("full: writing stops with one warning, stored entries are still read, writing resumes once there is room")
    func fullFileSystem() async throws {
        try await SmallFileSystem.with(kilobytes: 192) { mountPoint in
            let log = CapturedLog()
            let directory = mountPoint + "/cache"
            let cache = try DiskCache(directory: directory, writeRetryInterval: .milliseconds(200), logger: log.logger)
            let entries = try (1...30).map(entry)
            var stored: [Bool] = []
            for entry in entries { stored.append(try await cache.store(entry.bytes, metadata: entry.metadata)) }
            let kept = stored.prefix { $0 }.count
            #expect(kept > 0 && kept < entries.count, "192 KiB (the index and its journal take a part) holds some of the 30 thumbnails, not all")
            #expect(stored.dropFirst(kept).allSatisfy { !$0 }, "after the first refusal nothing is written")
            #expect(log.warnings.count == 1)
            #expect(log.warnings.first?.text.contains("cannot be written") == true)
            #expect(log.warnings.first?.metadata["directory"] == directory)
            #expect(log.warnings.first?.metadata["reason"] == "No space left on device")
            #expect(cache.writeRefusal == "No space left on device")
            // Each store after the first refusal is skipped, or (when the 200 ms passed meanwhile on a loaded machine)
            // tried again and refused quietly: none is lost from the counts.
            #expect(cache.statistics.writes == kept)
            #expect(cache.statistics.skippedWrites + cache.statistics.refusedWrites == entries.count - kept)
            #expect(cache.statistics.refusedWrites >= 1)
            #expect(tempFiles(directory).isEmpty)
            for stored in entries.prefix(kept) { #expect(await cache.entry(for: stored.url)?.bytes == stored.bytes) }
            // An answer that an image is missing upstream goes through the same breaker: no error, no second warning.
            let gone = KnownMissing(status: 404, message: "HTTP 404 Not Found", storedAt: Date(), until: Date().addingTimeInterval(60))
            try await cache.rememberKnownMissing(gone, for: "http://tiles.test/gone.jpg")
            #expect(log.warnings.count == 1)

            // Past the retry interval, a write is tried again; refused again, it stays quiet.
            let next = entries[kept]
            try await Task.sleep(for: .milliseconds(250))
            #expect(try await !cache.store(next.bytes, metadata: next.metadata))
            #expect(log.warnings.count == 1 && cache.writeRefusal == "No space left on device")

            // Room again: the next write after the retry interval succeeds, and writing goes on.
            try SmallFileSystem.remount(mountPoint, kilobytes: 4096, readOnly: false)
            try await Task.sleep(for: .milliseconds(250))
            #expect(try await cache.store(next.bytes, metadata: next.metadata))
            #expect(cache.writeRefusal == nil)
            #expect(await cache.entry(for: next.url)?.bytes == next.bytes)
            #expect(log.messages.contains { $0.level == .info && $0.text.contains("writable again") })
            #expect(log.warnings.count == 1)
        }
    }

    @Test("read-only: an open cache keeps reading with one warning; a pipeline started on it runs without a disk cache")
    func readOnlyFileSystem() async throws {
        try await SmallFileSystem.with(kilobytes: 1024) { mountPoint in
            let log = CapturedLog()
            let directory = mountPoint + "/cache"
            let cache = try DiskCache(directory: directory, logger: log.logger)
            let entries = try (1...4).map(entry)
            for stored in entries.prefix(2) { #expect(try await cache.store(stored.bytes, metadata: stored.metadata)) }

            // The cache holds its index open for writing, so the whole tmpfs cannot turn read-only under it: the
            // entries directory does, by a read-only bind mount over itself.
            try await SmallFileSystem.withReadOnly(directory + "/entries") {
                for stored in entries.dropFirst(2) {
                    let written = try await cache.store(stored.bytes, metadata: stored.metadata)
                    #expect(!written)
                }
                #expect(log.warnings.count == 1 && cache.writeRefusal == "Read-only file system")
                for stored in entries.prefix(2) { #expect(await cache.entry(for: stored.url)?.bytes == stored.bytes) }
                #expect(await cache.count == 2)

                let pipelineLog = CapturedLog()
                var configuration = ImagePipeline.Configuration()
                configuration.diskDirectory = directory
                let pipeline = ImagePipeline(configuration: configuration, logger: pipelineLog.logger)
                #expect(pipeline.diskCache == nil)
                #expect(pipelineLog.warnings.count == 1)
                #expect(pipelineLog.warnings.first?.text == "running without the disk cache")
                #expect(pipelineLog.warnings.first?.metadata["reason"]?.contains("Read-only file system") == true)
            }
        }
    }

    @Test("opened on a full file system: the entries are still read, writes are refused with one warning naming why")
    func openedWhenFull() async throws {
        try await SmallFileSystem.with(kilobytes: 512) { mountPoint in
            let directory = mountPoint + "/cache"
            let entries = try (1...3).map(entry)
            do {
                let cache = try DiskCache(directory: directory)
                for stored in entries { #expect(try await cache.store(stored.bytes, metadata: stored.metadata)) }
            }
            // Fill what is left (SQLite then cannot create the index's shared-memory file).
            let filler = open(mountPoint + "/filler", O_WRONLY | O_CREAT, 0o644)
            let block = [UInt8](repeating: 0, count: 4096)
            while write(filler, block, block.count) > 0 {}
            close(filler)
            let log = CapturedLog()
            let cache = try DiskCache(directory: directory, logger: log.logger)
            for stored in entries { #expect(await cache.entry(for: stored.url)?.bytes == stored.bytes) }
            #expect(await cache.count == 3 && cache.writeRefusal != nil)
            let next = try entry(4)
            #expect(try await !cache.store(next.bytes, metadata: next.metadata))
            #expect(log.warnings.count == 1 && log.warnings.first?.text.contains("cannot be written") == true, "\(log.warnings)")
            await #expect(throws: ImageCoreError.self) { try await cache.removeAll() }
            #expect(await cache.entry(for: entries[0].url) != nil, "nothing removed")
        }
    }

    @Test("a pipeline whose disk fills up mid-prefetch gets every image, with one warning")
    func prefetchIntoFullDisk() async throws {
        try await SmallFileSystem.with(kilobytes: 128) { mountPoint in
            try await withOrigin { origin in
                let log = CapturedLog()
                var configuration = ImagePipeline.Configuration()
                configuration.diskDirectory = mountPoint + "/cache"
                configuration.downloader = .testing()
                let pipeline = ImagePipeline(configuration: configuration, logger: log.logger)
                // Thumbnails (a few KB each), so the first to arrive fits whatever the order: the disk fills part way.
                let urls = origin.urlBuilder.images(for: Array(ElementCatalogue.standard.elements.prefix(40)), kinds: [.thumbnail])
                    .map(\.url)
                let run = await pipeline.prefetch(urls)
                #expect(run.results.allSatisfy { $0.error == nil }, "every image is fetched and validated")
                let disk = try #require(pipeline.diskCache)
                #expect(disk.statistics.writes > 0 && disk.statistics.writes < urls.count)
                #expect(disk.writeRefusal == "No space left on device")
                #expect(log.warnings.count == 1, "\(log.warnings.map(\.text))")
                #expect(tempFiles(mountPoint + "/cache").isEmpty)
            }
        }
    }
}

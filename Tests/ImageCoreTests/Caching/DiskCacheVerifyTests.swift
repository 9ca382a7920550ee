import Foundation
import ImageCore
import Testing
import TestSupport

@Suite("DiskCache.verifyAll", .timeLimit(.minutes(5)))
struct DiskCacheVerifyTests {
    @Test("keeps valid entries and removes damaged, cut-off and undecodable ones")
    func verify() async throws {
        try await withTemporaryDirectory { directory in
            let cache = try DiskCache(directory: directory)
            let inspector = ImageInspector()
            let bytes = Fixtures.thumbnailJPEG
            let header = try inspector.inspectHeader(bytes, subject: "x")
            for index in 0..<4 {
                try await cache.store(bytes, metadata: DiskCacheMetadata(url: "http://x/\(index).jpg", header: header, bytes: bytes,
                                                                  contentType: "image/jpeg", etag: nil, lastModified: nil, cacheControl: nil))
            }
            let stored = await cache.count
            #expect(stored == 4, "stored \(stored)")
            #expect(FileManager.default.fileExists(atPath: cache.path(for: "http://x/1.jpg")))
            // 1: flipped byte (checksum); 2: file cut short; 3: a header-only JPEG stored with a matching checksum.
            var damaged = [UInt8](try Data(contentsOf: URL(fileURLWithPath: cache.path(for: "http://x/1.jpg"))))
            damaged[damaged.count - 5] ^= 0xFF
            try Data(damaged).write(to: URL(fileURLWithPath: cache.path(for: "http://x/1.jpg")))
            try Data(damaged.prefix(20)).write(to: URL(fileURLWithPath: cache.path(for: "http://x/2.jpg")))
            let cut = Array(bytes.prefix(bytes.count / 2))
            try await cache.store(cut, metadata: DiskCacheMetadata(url: "http://x/3.jpg", header: header, bytes: cut,
                                                            contentType: "image/jpeg", etag: nil, lastModified: nil, cacheControl: nil))
            let verification = try await cache.verifyAll()
            #expect(verification.valid == 1 && verification.removed == 3 && verification.tempFiles == 0)
            #expect(try await DiskCache(directory: directory).count == 1)
        }
    }
}

import Foundation
import ImageCore
import Testing
import TestSupport

/// `LocalFile`'s reads against the bytes written, at the sizes around its buffers' edges, and against files whose size
/// the system does not know (`/proc`: `fstat` says 0).
@Suite("LocalFile reads")
struct LocalFileTests {
    /// Deterministic bytes of `count`.
    func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    @Test("a file is read whole, at every size around the 64 KiB chunk, and up to a limit")
    func wholeAndLimited() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            for (index, size) in [0, 1, 2, 4095, 65535, 65536, 65537, 131_073, 300_001].enumerated() {
                let written = bytes(size, seed: UInt64(index + 1))
                let path = directory + "/\(size)"
                #expect(FileManager.default.createFile(atPath: path, contents: Data(written)))
                #expect(try LocalFile.read(path) == written, "size \(size)")
                #expect(try LocalFile.read(path, upTo: size + 1) == written, "size \(size), limit one more")
                #expect(try LocalFile.read(path, upTo: size / 2) == Array(written.prefix(size / 2)), "size \(size), half")
                #expect(try LocalFile.readRegular(path, atMost: size) == written, "size \(size), regular")
                if size > 0 {
                    #expect(throws: ImageCoreError.self, "size \(size) above a limit one less") {
                        try LocalFile.readRegular(path, atMost: size - 1)
                    }
                }
            }
            #expect(try LocalFile.read(directory + "/missing", upTo: 10) == nil)
        }
    }

    @Test("a file whose size fstat does not know (/proc) is read to its end, and up to a limit")
    func unknownSize() throws {
        // /proc/self/maps has a size of 0 and, for this process, tens of kilobytes: past the first buffer's one byte.
        let maps = try #require(try LocalFile.read("/proc/self/maps", upTo: 1 << 24))
        #expect(maps.count > 1000)
        let text = String(decoding: maps, as: UTF8.self)
        #expect(text.hasSuffix("\n"), "read to its end")
        #expect(text.contains("[stack]"))
        let limited = try #require(try LocalFile.read("/proc/self/maps", upTo: 700))
        #expect(limited.count == 700)
        #expect(Array(maps.prefix(100)) == Array(limited.prefix(100)))
        // /proc/self/pagemap (also size 0) refuses a read of less than its 8-byte entries: the first read has room.
        #expect(try LocalFile.read("/proc/self/pagemap", upTo: 64)?.count == 64)
    }
}

import Catalogue
import Foundation
import ImageCore
import Testing
import TestSupport
import TileCacheOrigin

/// The disk cache's cost per image does not grow with its size, counted in system calls (strace), not timed.
@Suite("disk cache at scale", .timeLimit(.minutes(5)), .heavy, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"),
                                        "needs strace (make test installs it)"))
struct DiskCacheScalingTests {
    static let strace = "/usr/bin/strace"

    /// A cache at `directory` holding `count` entries (stored in this process, as a previous run would have).
    func fill(_ directory: String, count: Int) async throws {
        let bytes = ImageSynthesizer(seed: 7).jpeg(ElementCatalogue.standard.element(number: 1)!, kind: .thumbnail)
        let header = try ImageInspector().inspectHeader(bytes, subject: "fill")
        let cache = try DiskCache(directory: directory)
        for index in 0..<count {
            let url = "http://filler.test/\(index).jpg"
            let metadata = DiskCacheMetadata(url: url, header: header, bytes: bytes, contentType: "image/jpeg", etag: nil,
                                             lastModified: nil, cacheControl: "max-age=3600")
            try await cache.store(bytes, metadata: metadata)
        }
    }

    /// The calls of each traced system call a `tilecache prefetch` of `urls` into `cache` made, by strace's count.
    func tracedPrefetch(_ urls: [String], cache: String, work: String) async throws -> [String: Int] {
        let list = work + "/urls-\(UUID().uuidString).txt", counts = work + "/strace-\(UUID().uuidString).txt"
        try urls.joined(separator: "\n").write(toFile: list, atomically: true, encoding: .utf8)
        let trace = [Self.strace, "-f", "-c", "-o", counts, "-e", "trace=newfstatat,statx,stat,lstat,getdents64,flock"]
        // LeakSanitizer cannot run under ptrace (make test-sanitize): the child's leak check is off there.
        let run = try await ChildProcess.run(["prefetch", "--urls", list, "--cache-dir", cache, "-j", "8", "--format", "json"],
                                             environment: ["ASAN_OPTIONS": "detect_leaks=0"], wrappedIn: trace)
        #expect(run.code == 0, "\(run.err)")
        var calls: [String: Int] = [:]
        for line in try String(contentsOfFile: counts, encoding: .utf8).split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // "% time seconds usecs/call calls [errors] syscall"
            guard fields.count >= 5, let name = fields.last, name != "total", let number = Int(fields[3]) else { continue }
            calls[String(name)] = number
        }
        return calls
    }

    @Test("40 new images cost the same file-system calls in a cache of 100 entries and of 2,000")
    func storesDoNotRescan() async throws {
        try await withTemporaryDirectory { work in
            try await withOrigin { origin in
                try await fill(work + "/small", count: 100)
                try await fill(work + "/large", count: 2_000)
                let urls = { (tag: String) in
                    (1...40).map { "\(origin.tilesBase)/Tiles/\(String(format: "%03d", $0))/s7.JPG?\(tag)" }
                }
                let small = try await tracedPrefetch(urls("small"), cache: work + "/small", work: work)
                let large = try await tracedPrefetch(urls("large"), cache: work + "/large", work: work)
                let stats = { (calls: [String: Int]) in ["newfstatat", "statx", "stat", "lstat"].reduce(0) { $0 + calls[$1, default: 0] } }
                // Listing 1,900 more names at open costs a few more getdents64 calls; a rescan per write (stat of
                // every entry) would cost 40 x 1,900 more stats, and a scan at open alone 1,900.
                #expect(stats(large) - stats(small) < 100, "stat calls: \(stats(small)) at 100 entries, \(stats(large)) at 2,000")
                #expect(large["getdents64", default: 0] - small["getdents64", default: 0] < 40,
                        "getdents64: \(small) against \(large)")
                #expect(large["flock", default: 0] <= small["flock", default: 0] + 4, "flock: \(small) against \(large)")
            }
        }
    }
}

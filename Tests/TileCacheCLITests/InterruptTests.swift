import Foundation
import ImageCore
import Testing
@testable import TileCacheCLI
import TestSupport
import TileCacheOrigin

#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C and SIGTERM sent to a real `tilecache` process mid-run: a partial report marked interrupted, the run log
/// says so, the cache stays sound, and the exit code is the shell's (130, 143).
@Suite("interrupted runs", .timeLimit(.minutes(5)), .heavy)
struct InterruptTests {
    /// An origin slow enough (300 ms a response) that 118 thumbnails two at a time take about 18 s: a child cannot
    /// finish before the test sends its signal, however starved the test is on a loaded machine (a run of 40 once did).
    func withSlowOrigin<T>(_ body: (OriginServer) async throws -> T) async throws -> T {
        try await withOrigin({ $0.latency = .milliseconds(300) }, body)
    }

    /// Waits until the origin has answered `count` requests.
    func waitForRequests(_ origin: OriginServer, _ count: Int) async throws {
        try await waitUntil("the child's requests reaching the origin", within: .seconds(30)) { origin.statistics.requests >= count }
    }

    @Test("prefetch: Ctrl-C prints the partial report, logs it as interrupted, leaves a sound cache, exits 130; SIGTERM 143",
          arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
    func prefetch(signal: Int32, exitCode: Int32) async throws {
        try await withTemporaryDirectory { directory in
            try await withSlowOrigin { origin in
                let cache = directory + "/cache"
                let child = try ChildProcess(["prefetch", "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase,
                                              "--elements", "1-118", "--kind", "thumbnails", "-j", "2", "--cache-dir", cache, "--format", "json"])
                try await waitForRequests(origin, 4)
                child.send(signal)
                let code = try await child.wait()
                #expect(code == exitCode, "\(child.err)")
                #expect(child.err.contains("interrupted: stopping; press Ctrl-C again to exit at once"))
                let report = try JSONDecoder().decode(PrefetchReport.self, from: Data(child.out.utf8))
                #expect(report.interrupted)
                let succeeded = report.succeeded, notCompleted = report.notCompleted
                #expect(report.requested == 118 && report.failed == 0)
                #expect(succeeded >= 2 && notCompleted > 0 && succeeded + notCompleted == 118, "\(report)")
                #expect(origin.statistics.requests < 40, "no new work was admitted after the signal")
                let logged = try #require(RunLog.entries(cacheDirectory: cache).last)
                #expect(logged.report.interrupted && logged.report.succeeded == succeeded)
                let line = try #require(String(decoding: FileManager.default.contents(atPath: cache + "/runs.jsonl") ?? Data(), as: UTF8.self)
                    .split(separator: "\n").last)
                #expect(line.contains("\"interrupted\":true"))
                // The cache is sound: every entry verifies and decodes, and holds exactly what succeeded.
                let verify = await tilecache("stats", "--verify", "--cache-dir", cache, "--format", "json")
                #expect(verify.code == 0, "\(verify.out)")
                let verification = try verify.decoded(as: CLIJSON.CacheStats.self).verification
                #expect(verification?.valid == succeeded && verification?.removed == 0)
            }
        }
    }

    @Test("an interrupted prefetch's text report and its JSON (the run log) agree on every count; the latency table counts only URLs that ended")
    func interruptedCountsAgree() async throws {
        try await withTemporaryDirectory { directory in
            try await withSlowOrigin { origin in
                let cache = directory + "/cache"
                let child = try ChildProcess(["prefetch", "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase,
                                              "--elements", "1-118", "--kind", "thumbnails", "-j", "2", "--cache-dir", cache])
                try await waitForRequests(origin, 4)
                child.send(SIGINT)
                #expect(try await child.wait() == 130, "\(child.err)")
                // The same run as JSON, decoded as a program reads it.
                let report = try #require(RunLog.entries(cacheDirectory: cache).last?.report)
                #expect(report.interrupted && report.notCompleted > 0)
                let summary = Self.rows(of: child.out, below: "prefetch (interrupted)")
                let counts: [(String, Int)] = [
                    ("requested", report.requested), ("succeeded", report.succeeded), ("failed", report.failed),
                    ("expected missing", report.expectedMissing), ("not completed (interrupted)", report.notCompleted),
                    ("memory hits", report.memoryHits), ("disk hits", report.diskHits), ("revalidated", report.revalidated),
                    ("network fetches", report.networkFetches)]
                for (row, value) in counts { #expect(summary[row] == "\(value)", "\(row): \(child.out)") }
                #expect(summary["hit rate"] == String(format: "%.1f%%", report.hitRate * 100))
                #expect(summary["images per second"] == String(format: "%.0f", report.imagesPerSecond))
                let ended = report.succeeded + report.failed + report.expectedMissing
                #expect(ended + report.notCompleted == report.requested)
                #expect(abs(report.imagesPerSecond * report.durationSeconds - Double(ended)) < 0.01, "a rate of the URLs that ended")
                // The latency table: one measurement per URL that ended; loads cancelled in flight are not failures.
                let latencies = Self.rows(of: child.out, below: "outcome").compactMapValues { Int($0.split(separator: " ").first ?? "") }
                #expect(latencies["failure", default: 0] == report.failed, "\(child.out)")
                #expect(latencies.values.reduce(0, +) == ended, "\(child.out)")
                #expect(report.latencyMilliseconds.values.map(\.count).reduce(0, +) == ended)
            }
        }
    }

    /// The rows of the text table whose header line contains `header`, by their first column (columns are apart by two
    /// spaces or more; the value is the rest of the line).
    static func rows(of text: String, below header: String) -> [String: String] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(where: { $0.contains(header) }) else { return [:] }
        var rows: [String: String] = [:]
        for line in lines[(start + 1)...] {
            guard !line.isEmpty, let gap = line.range(of: "  +", options: .regularExpression) else { break }
            rows[String(line[..<gap.lowerBound])] = String(line[gap.upperBound...]).trimmingCharacters(in: .whitespaces)
        }
        return rows
    }

    @Test("stats --verify on a cache that has no entries yet (a first run killed early) reports zero entries verified")
    func verifyEmptyCache() async throws {
        try await withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(atPath: directory + "/never-written", withIntermediateDirectories: true)
            let verify = await tilecache("stats", "--verify", "--cache-dir", directory + "/never-written", "--format", "json")
            #expect(verify.code == 0, "\(verify.out)")
            let verification = try verify.decoded(as: CLIJSON.CacheStats.self).verification
            #expect(verification?.valid == 0 && verification?.removed == 0 && verification?.tempFiles == 0, "\(verify.out)")
        }
    }

    @Test("validate: Ctrl-C prints what was checked, marked interrupted, and exits 130")
    func validate() async throws {
        try await withTemporaryDirectory { directory in
            try await withSlowOrigin { origin in
                let child = try ChildProcess(["validate", "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase,
                                              "--elements", "1-118", "--kind", "thumbnails", "-j", "2", "--format", "json"])
                try await waitForRequests(origin, 4)
                child.send(SIGINT)
                let code = try await child.wait()
                #expect(code == 130, "\(child.err)")
                let report = try JSONDecoder().decode(URLValidationReport.self, from: Data(child.out.utf8))
                let checked = report.checked, notChecked = report.notChecked
                #expect(report.interrupted && report.broken == 0)
                #expect(checked >= 2 && notChecked > 0 && checked + notChecked == 118, "\(report)")
                #expect(report.results.count == checked)
                _ = directory
            }
        }
    }

    @Test("two Ctrl-Cs in a row end the process at once, with 130")
    func twice() async throws {
        try await withSlowOrigin { origin in
            let child = try ChildProcess(["validate", "--tiles-base", origin.tilesBase, "--elements", "1-40", "--kind", "thumbnails", "-j", "2"])
            try await waitForRequests(origin, 2)
            child.send(SIGINT)
            child.send(SIGINT)
            let started = ContinuousClock.now
            let code = try await child.wait()
            #expect(code == 130)
            #expect(ContinuousClock.now - started < TestTime.scaled(.seconds(5)))
        }
    }

    @Test("while the first Ctrl-C's stop is still under way, a second one exits at once (an exit test)")
    func secondSignalExits() async {
        await #expect(processExitsWith: .exitCode(130)) {
            // Work that ignores cancellation: only the second signal can end this process. The signals are watched
            // before the work starts, and the second is sent once the first has been taken (at its onInterrupt), so
            // the kernel cannot merge the two into one pending signal.
            _ = await Interruption.run(onInterrupt: { _ in kill(getpid(), SIGINT) }) {
                await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in
                    Thread.detachNewThread {
                        kill(getpid(), SIGINT)
                        Thread.sleep(forTimeInterval: 30)  // a deadline, not a wait for an event
                        exit(3)  // the second signal did not end the process
                    }
                }
            }
            exit(0)  // never reached
        }
    }
}

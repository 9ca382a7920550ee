import Foundation
import ImageCore
import Testing
import TestSupport
import TileCacheCLI
import TileCacheOrigin
import Catalogue

/// The hardening fault matrix (docs/reliability.md) through `tilecache prefetch` and `tilecache validate`.
@Suite("fault matrix through the CLI", .timeLimit(.minutes(5)), .heavy)
struct FaultMatrixCLITests {
    /// The matrix origin, its thumbnail URLs in case order, and the common arguments (short deadlines, one retry).
    /// The deadline (4 s) is far below the slow drip's 25 s and far above what a loaded machine needs to send a
    /// cut-off body once the images are rendered beforehand (`prerenderFaultMatrixImages`: without it, runs at 1.5 s
    /// and 3 s saw the truncated case time out first, its close queued behind renders on the origin's one thread).
    private static func withMatrixOrigin<T>(_ body: (OriginServer, _ urls: [String], _ arguments: [String]) async throws -> T) async throws -> T {
        try await prerenderFaultMatrixImages()
        return try await withOrigin({ $0.faults = FaultMatrix.rules }) { origin in
            let urls = FaultMatrix.cases.indices.map { origin.urlBuilder.thumbnailURL(for: FaultMatrix.element(ofCase: $0)) }
            let arguments = ["--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase,
                             "--elements", "1-\(FaultMatrix.cases.count)", "--kind", "thumbnails",
                             "--timeout", String(4 * TestTime.scale), "--retries", "1", "--format", "json"]
            return try await body(origin, urls, arguments)
        }
    }

    @Test("prefetch: every case gets its outcome, only valid images are stored, and the counts add up")
    func prefetch() async throws {
        try await withTemporaryDirectory { cache in
            try await Self.withMatrixOrigin { origin, urls, arguments in
                let run = await tilecache(["prefetch", "--cache-dir", cache] + arguments)
                #expect(run.code == 2)
                let report = try run.decoded(as: PrefetchReport.self)
                let reasons = Dictionary(uniqueKeysWithValues: report.failures.map { ($0.url, $0.reason) })
                let valid = FaultMatrix.cases.filter(\.isValid).count
                for (index, testCase) in FaultMatrix.cases.enumerated() {
                    #expect(reasons[urls[index]] == (testCase.isValid ? nil : testCase.outcome.rawValue), "\(testCase.name)")
                }
                #expect(report.requested == FaultMatrix.cases.count)
                #expect(report.succeeded == valid && report.networkFetches == valid)
                #expect(report.failed == FaultMatrix.cases.count - valid && report.failures.count == FaultMatrix.cases.count - valid)
                #expect(report.memoryHits == 0 && report.diskHits == 0)

                let disk = try DiskCache(directory: cache)
                let stored = await Dictionary(uniqueKeysWithValues: disk.allMetadata().map { ($0.url, $0.format.rawValue) })
                for (index, testCase) in FaultMatrix.cases.enumerated() {
                    #expect(stored[urls[index]] == testCase.format, "\(testCase.name)")
                }
                let verification = try await disk.verifyAll()
                #expect(verification.valid == valid && verification.removed == 0)
            }
        }
    }

    @Test("validate: every case gets its outcome and nothing is stored")
    func validate() async throws {
        try await withTemporaryDirectory { cache in
            try await Self.withMatrixOrigin { origin, urls, arguments in
                let run = await tilecache(["validate", "--cache-dir", cache] + arguments)
                #expect(run.code == 2)
                let results = try run.decoded(as: URLValidationReport.self).results
                #expect(results.map(\.url) == urls)
                for (result, testCase) in zip(results, FaultMatrix.cases) {
                    #expect((result.reason ?? "valid") == testCase.outcome.rawValue, "\(testCase.name)")
                    if testCase.isValid { #expect(result.format == testCase.format, "\(testCase.name)") }
                }
                #expect(!FileManager.default.fileExists(atPath: cache + "/entries"))
            }
        }
    }
}

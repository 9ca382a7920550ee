import Foundation
import ImageCore
import Testing
import TileCacheFixtures
import TileCacheOrigin

/// The hardening fault matrix (docs/reliability.md) through `tilecache prefetch` and `tilecache validate`.
@Suite("fault matrix through the CLI")
struct FaultMatrixCLITests {
    /// The matrix origin, its thumbnail URLs in case order, and the common arguments (short deadlines, one retry).
    private static func start() async throws -> (OriginServer, urls: [String], arguments: [String]) {
        var configuration = OriginServer.Configuration()
        configuration.faults = FaultMatrix.rules
        let origin = try await OriginServer.start(configuration)
        let urls = FaultMatrix.cases.indices.map { origin.urlBuilder.thumbnailURL(for: FaultMatrix.element(ofCase: $0)) }
        let arguments = ["--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase,
                         "--elements", "1-\(FaultMatrix.cases.count)", "--kind", "thumbnails",
                         "--timeout", String(1.5 * TestTime.scale), "--retries", "1", "--format", "json"]
        return (origin, urls, arguments)
    }

    @Test("prefetch: every case gets its outcome, only valid images are stored, and the counts add up")
    func prefetch() async throws {
        try await withTemporaryDirectory { cache in
            let (origin, urls, arguments) = try await Self.start()
            let run = await tilecache(["prefetch", "--cache-dir", cache] + arguments)
            await origin.shutdown()
            #expect(run.code == 2)
            let report = try #require(try run.json() as? [String: Any])
            let failures = try #require(report["failures"] as? [[String: Any]])
            let reasons = Dictionary(uniqueKeysWithValues: failures.map { ($0["url"] as? String ?? "", $0["reason"] as? String ?? "") })
            let valid = FaultMatrix.cases.filter(\.isValid).count
            for (index, testCase) in FaultMatrix.cases.enumerated() {
                #expect(reasons[urls[index]] == (testCase.isValid ? nil : testCase.outcome.rawValue), "\(testCase.name)")
            }
            #expect(report["requested"] as? Int == FaultMatrix.cases.count)
            #expect(report["succeeded"] as? Int == valid && report["networkFetches"] as? Int == valid)
            #expect(report["failed"] as? Int == FaultMatrix.cases.count - valid && failures.count == FaultMatrix.cases.count - valid)
            #expect(report["memoryHits"] as? Int == 0 && report["diskHits"] as? Int == 0)

            let disk = try DiskCache(directory: cache)
            let stored = Dictionary(uniqueKeysWithValues: disk.allMetadata().map { ($0.url, $0.format.rawValue) })
            for (index, testCase) in FaultMatrix.cases.enumerated() {
                #expect(stored[urls[index]] == testCase.format, "\(testCase.name)")
            }
            let verification = try disk.verifyAll()
            #expect(verification.valid == valid && verification.removed == 0)
        }
    }

    @Test("validate: every case gets its outcome and nothing is stored")
    func validate() async throws {
        try await withTemporaryDirectory { cache in
            let (origin, urls, arguments) = try await Self.start()
            let run = await tilecache(["validate", "--cache-dir", cache] + arguments)
            await origin.shutdown()
            #expect(run.code == 2)
            let results = try #require((try run.json() as? [String: Any])?["results"] as? [[String: Any]])
            #expect(results.map { $0["url"] as? String } == urls)
            for (result, testCase) in zip(results, FaultMatrix.cases) {
                #expect((result["reason"] as? String ?? "valid") == testCase.outcome.rawValue, "\(testCase.name)")
                if testCase.isValid { #expect(result["format"] as? String == testCase.format, "\(testCase.name)") }
            }
            #expect(!FileManager.default.fileExists(atPath: cache + "/entries"))
        }
    }
}

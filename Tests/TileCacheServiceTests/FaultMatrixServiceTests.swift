import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ImageCore
import Testing
import TestSupport
import TileCacheOrigin
import Catalogue
import TileCacheService

/// The hardening fault matrix (docs/reliability.md) through `tilecache serve`'s thumbnail endpoint.
@Suite("fault matrix through the service", .timeLimit(.minutes(5)), .heavy)
struct FaultMatrixServiceTests {
    @Test("every case gets its status; only valid images are cached; failures are not; the statistics add up")
    func matrix() async throws {
        try await prerenderFaultMatrixImages()
        var origin = OriginServer.Configuration()
        origin.faults = FaultMatrix.rules
        let harness = try await ServiceHarness.start(origin: origin) {
            $0.pipeline.downloader.retryPolicy.maxAttempts = 2
            // The timeout cases are stalls (a hang, 200 B/s): caught by the low-speed limit, so that a loaded machine's
            // slow 21 MiB body or reset is not taken for one, as a 1.5 s whole-transfer deadline did.
            $0.pipeline.downloader.transferOptions.lowSpeedTime = TestTime.scaled(.seconds(2))
        }
        let cases = FaultMatrix.cases
        let valid = cases.filter(\.isValid).count
        try await withService(harness) { client, dependencies in
            let base = "http://127.0.0.1:\(try #require(client.port))"
            // The matrix goes through the project's own client, not the test client: that one gives every request a
            // fixed 15 s deadline, and each stall case takes two attempts at the low-speed limit (2 x 8 s under
            // make test-sanitize). The same 15 s here, stretched with the service's deadlines.
            let engine = ImageCore.TransferEngine()  // 8 connections per host, as the test client
            let options = {
                var options = ImageCore.TransferOptions()
                options.totalTimeout = TestTime.scaled(.seconds(15))
                options.lowSpeedTime = TestTime.scaled(.seconds(15))  // the service sends nothing while it retries a stall
                return options
            }()
            /// Requests every case's thumbnail together (the client sends 8 at a time): (status, source header, sniffed
            /// format, Content-Type, reason).
            func requestAll() async throws -> [(Int, String?, ImageFormat?, String?, String?)] {
                try await withThrowingTaskGroup(of: (Int, (Int, String?, ImageFormat?, String?, String?)).self) { group in
                    for index in cases.indices {
                        group.addTask {
                            let response = try await engine.perform(ImageCore.TransferRequest(
                                url: base + "/api/v1/elements/\(FaultMatrix.element(ofCase: index).number)/thumbnail", options: options))
                            let ok = response.status == 200
                            return (index, (response.status, response.headers["X-TileCache-Source"],
                                            ok ? ImageFormat.sniff(response.body) : nil, response.contentType,
                                            ok ? nil : try? JSONDecoder().decode(ErrorBody.self, from: Data(response.body)).error.reason))
                        }
                    }
                    var results = [(Int, String?, ImageFormat?, String?, String?)?](repeating: nil, count: cases.count)
                    for try await (index, result) in group { results[index] = result }
                    return results.map { $0! }
                }
            }

            let first = try await requestAll()
            for (result, testCase) in zip(first, cases) {
                #expect(result.0 == testCase.serviceStatus, "\(testCase.name): \(result.4 ?? "")")
                if testCase.isValid {
                    #expect(result.2?.rawValue == testCase.format && result.3 == result.2?.mimeType, "\(testCase.name)")
                } else if testCase.serviceStatus == 502 {
                    #expect(result.4 == "upstream-" + testCase.outcome.rawValue, "\(testCase.name)")
                }
            }
            /// `/api/v1/stats`: (network fetches, failures, memory-tier entries, disk entries).
            func stats() async throws -> (Int?, Int, Int?, Int?) {
                let stats = try await client.execute(uri: "/api/v1/stats", method: .get).decoded(as: ServiceJSON.Stats.self)
                return (stats.outcomes["networkFetch"], stats.failures.values.reduce(0, +), stats.memoryCache.count, stats.diskEntries)
            }
            let afterFirst = try await stats()
            #expect(afterFirst.0 == valid && afterFirst.1 == cases.count - valid)
            #expect(afterFirst.2 == valid && afterFirst.3 == valid)
            let storedURLs = await Set(dependencies.pipeline.diskCache?.allMetadata().map(\.url) ?? [])
            let validURLs = Set(cases.indices.filter { cases[$0].isValid }.map {
                harness.origin.urlBuilder.thumbnailURL(for: FaultMatrix.element(ofCase: $0))
            })
            #expect(storedURLs == validURLs)

            // Again: valid images come from memory; failures were not cached, so they fail the same way again.
            harness.origin.resetStatistics()
            let second = try await requestAll()
            for (result, testCase) in zip(second, cases) {
                #expect(result.0 == testCase.serviceStatus, "again: \(testCase.name)")
                if testCase.isValid { #expect(result.1 == "memory", "again: \(testCase.name)") }
            }
            #expect(harness.origin.statistics.requestsByPath.keys.allSatisfy { path in
                !validURLs.contains { $0.hasSuffix(path) } })
            let afterSecond = try await stats()
            #expect(afterSecond.0 == valid && afterSecond.1 == 2 * (cases.count - valid))
            #expect(afterSecond.2 == valid && afterSecond.3 == valid)
        }
    }

    @Test("a valid image requested right after one whose JPEG header is damaged is 200, every time")
    func validAfterDamagedHeader() async throws {
        try await prerenderFaultMatrixImages()
        var origin = OriginServer.Configuration()
        origin.faults = FaultMatrix.rules
        let harness = try await ServiceHarness.start(origin: origin)
        let damaged = try #require(FaultMatrix.cases.firstIndex { $0.fault == .body(.jpegBogusDHTLength) })
        try await withService(harness) { client, _ in
            // Thumbnails past the matrix are served as they are; each is asked once, so each is decoded after the
            // damaged one (failures are not cached, so that one is fetched and judged every time).
            for number in (FaultMatrix.cases.count + 1)...(FaultMatrix.cases.count + 12) {
                let broken = try await client.execute(
                    uri: "/api/v1/elements/\(FaultMatrix.element(ofCase: damaged).number)/thumbnail", method: .get)
                #expect(broken.status == .badGateway && broken.errorReason == "upstream-corrupt")
                let valid = try await client.execute(uri: "/api/v1/elements/\(number)/thumbnail", method: .get)
                #expect(valid.status == .ok, "element \(number): \(valid.errorReason ?? "")")
                let resized = try await client.execute(uri: "/api/v1/elements/\(number)/image?w=64", method: .get)
                #expect(resized.status == .ok, "element \(number) full-size at w=64: \(resized.errorReason ?? "")")
            }
        }
    }
}

/// The service's JSON error body, `{"error": {"status", "reason", "message"}}`: the part these tests read.
private struct ErrorBody: Decodable {
    struct Details: Decodable { var reason: String }
    var error: Details
}

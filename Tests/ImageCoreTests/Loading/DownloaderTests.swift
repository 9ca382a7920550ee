import Catalogue
import Foundation
import ImageCore
import Testing
import TileCacheOrigin
import TestSupport

@Suite("Downloader against the loopback origin", .timeLimit(.minutes(5)), .heavy)
struct DownloaderTests {
    @Test("a request limited to public addresses runs on an engine of its own: refused at loopback, not retried, while the same URL unlimited is fetched")
    func publicOnlyRequests() async throws {
        try await withOrigin { origin in
            let downloader = Downloader(configuration: .testing(concurrency: 4))
            let url = origin.baseURL + "/periodictable/Tiles/001/s7.JPG"
            let first = try await downloader.fetch(url)  // opens a kept-alive connection to the origin
            #expect(first.status == 200)
            var limited = TransferRequest(url: url, options: downloader.configuration.transferOptions)
            limited.addresses = .publicOnly
            let error = await #expect(throws: ImageCoreError.self) { try await downloader.fetch(limited) }
            #expect(error?.reason == .forbiddenAddress, "\(String(describing: error))")
            #expect(downloader.statistics.retries == 0)
            // The refused request did not borrow the kept-alive connection the first fetch left open.
            #expect(origin.statistics.requests == 1 && origin.statistics.connectionsAccepted == 1)
        }
    }

    @Test("never has more than N transfers in flight, measured at the origin")
    func concurrencyBound() async throws {
        try await withOrigin({ $0.latency = .milliseconds(60) }) { origin in
            let downloader = Downloader(configuration: .testing(concurrency: 4))
            let urls = origin.urlBuilder.images(for: Array(ElementCatalogue.standard.elements.prefix(30)), kinds: [.thumbnail]).map(\.url)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for url in urls { group.addTask { _ = try await downloader.fetch(url) } }
                try await group.waitForAll()
            }
            #expect(origin.statistics.maxInFlight == 4)
            #expect(origin.statistics.requests == 30)
        }
    }

    @Test("the transfer limit is the one knob: above the engine's old default of 8, the origin sees that many at once")
    func engineFollowsTheLimit() async throws {
        try await withOrigin({ $0.latency = .milliseconds(200) }) { origin in
            let downloader = Downloader(configuration: .testing(concurrency: 16))
            #expect(downloader.engine.configuration.maxConnectionsPerHost == 16 && downloader.engine.configuration.maxTotalConnections >= 16)
            let urls = origin.urlBuilder.images(for: Array(ElementCatalogue.standard.elements.prefix(32)), kinds: [.thumbnail]).map(\.url)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for url in urls { group.addTask { _ = try await downloader.fetch(url) } }
                try await group.waitForAll()
            }
            #expect(origin.statistics.maxInFlight == 16)
        }
    }

    @Test("503 twice then success is retried and succeeds")
    func retryThenSuccess() async throws {
        try await withOrigin({ $0.faults = [FaultRule(pathContains: "", fault: .failFirst(count: 2, status: 503))] }) { origin in
            let downloader = Downloader(configuration: .testing())
            let response = try await downloader.fetch(origin.baseURL + "/periodictable/Tiles/001/s7.JPG")
            #expect(response.status == 200)
            #expect(origin.statistics.requests == 3 && downloader.statistics.retries == 2)
        }
    }

    @Test("attempts are bounded: a persistent 500 fails after maxAttempts")
    func boundedAttempts() async throws {
        try await withOrigin({ $0.faults = [FaultRule(pathContains: "", fault: .status(500))] }) { origin in
            let downloader = Downloader(configuration: .testing(attempts: 3))
            let result = await downloader.result(origin.baseURL + "/periodictable/Tiles/001/s7.JPG")
            guard case .failure(let error) = result else { Issue.record("expected a failure"); return }
            #expect(error.reason == .httpStatus && error.httpStatus == 500)
            #expect(error.message.contains("3 attempts"))
            #expect(origin.statistics.requests == 3)
        }
    }

    @Test("404, 403 and 410 are never retried", arguments: [404, 403, 410])
    func noRetryOnClientError(status: Int) async throws {
        try await withOrigin({ $0.faults = [FaultRule(pathContains: "", fault: .status(status))] }) { origin in
            let downloader = Downloader(configuration: .testing())
            let result = await downloader.result(origin.baseURL + "/periodictable/Tiles/001/s7.JPG")
            guard case .failure(let error) = result else { Issue.record("expected a failure"); return }
            #expect(error.reason == .httpStatus && error.httpStatus == status)
            #expect(origin.statistics.requests == 1 && downloader.statistics.retries == 0)
        }
    }

    @Test("a real 404 from the photo host (element 90 and up) is one request")
    func realNotFound() async throws {
        try await withOrigin { origin in
            let downloader = Downloader(configuration: .testing())
            let thorium = ElementCatalogue.standard.element(number: 90)!
            let result = await downloader.result(origin.urlBuilder.fullImageURL(for: thorium))
            #expect(result.failureReason == .httpStatus)
            #expect(origin.statistics.requests == 1)
        }
    }

    @Test("429 with Retry-After waits as asked, then succeeds")
    func retryAfter() async throws {
        try await withOrigin({ $0.faults = [FaultRule(pathContains: "", fault: .tooManyRequests(count: 1, retryAfterSeconds: 1))] }) { origin in
            let downloader = Downloader(configuration: .testing())
            let started = ContinuousClock.now
            let response = try await downloader.fetch(origin.baseURL + "/periodictable/Tiles/001/s7.JPG")
            #expect(response.status == 200)
            #expect(ContinuousClock.now - started >= .seconds(1))
            #expect(origin.statistics.requests == 2)
        }
    }

    @Test("a body cut off mid-way is retried, then reported as truncated")
    func truncatedBody() async throws {
        try await withOrigin({ $0.faults = [FaultRule(pathContains: "", fault: .truncatedBody(fraction: 0.5))] }) { origin in
            let downloader = Downloader(configuration: .testing(attempts: 2))
            let result = await downloader.result(origin.baseURL + "/periodictable/Tiles/001/s7.JPG")
            #expect(result.failureReason == .truncated)
            #expect(origin.statistics.requests == 2)
        }
    }

    @Test("a connection reset mid-body is a connect failure, retried")
    func reset() async throws {
        try await withOrigin({ $0.faults = [FaultRule(pathContains: "", fault: .resetMidBody)] }) { origin in
            let downloader = Downloader(configuration: .testing(attempts: 2))
            let result = await downloader.result(origin.baseURL + "/periodictable/Tiles/001/s7.JPG")
            let reason = result.failureReason
            #expect(reason == .connect || reason == .truncated, "\(result)")
            #expect(origin.statistics.requests == 2)
        }
    }
}

import Foundation
import Logging
@testable import ImageCore
import Testing
import TestSupport
import TileCacheOrigin

@Suite("Negative caching: a 404 or 410 is not asked again while remembered", .timeLimit(.minutes(5)), .heavy)
struct NegativeCacheTests {
    func pipeline(_ directory: String?, negativeLifetime: Duration = .seconds(60)) -> ImagePipeline {
        var configuration = ImagePipeline.Configuration()
        configuration.diskDirectory = directory
        configuration.negativeLifetime = negativeLifetime
        configuration.downloader = .testing()
        return ImagePipeline(configuration: configuration)
    }

    /// The error `request` fails with, or a recorded issue when it succeeds.
    func failure(_ pipeline: ImagePipeline, _ request: ImageRequest) async -> ImageCoreError? {
        do {
            let response = try await pipeline.image(for: request)
            Issue.record("expected a failure, got \(response.outcome) for \(request.url)")
            return nil
        } catch {
            return error
        }
    }

    @Test("a 404 is remembered in this process and, through the disk cache, the next; a reload, zero and clear ask again")
    func remembered() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let url = origin.imagesBase + "/nothing-here.jpg"
                let first = pipeline(directory)
                let asked = await failure(first, ImageRequest(url: url))
                #expect(asked?.httpStatus == 404 && asked?.isRemembered == false)
                #expect(origin.statistics.requests == 1)

                let again = await failure(first, ImageRequest(url: url))
                #expect(again?.httpStatus == 404 && again?.reason == .httpStatus && again?.isRemembered == true, "\(String(describing: again))")
                #expect(again?.message.hasPrefix("HTTP 404 Not Found (upstream's answer") == true, "\(String(describing: again))")
                let restarted = pipeline(directory)  // another process using the directory
                #expect(await failure(restarted, ImageRequest(url: url))?.isRemembered == true)
                #expect(origin.statistics.requests == 1)
                // The prefetch report's expected-missing rule still sees a 404.
                let run = await restarted.prefetch([url], expectedMissing: [url])
                #expect(run.report.expectedMissing == 1 && run.report.failed == 0 && origin.statistics.requests == 1)

                // Off, a reload and a cleared cache each ask upstream.
                #expect(await failure(pipeline(directory, negativeLifetime: .zero), ImageRequest(url: url))?.isRemembered == false)
                #expect(origin.statistics.requests == 2)
                #expect(await failure(restarted, ImageRequest(url: url, options: .reloadIgnoringCachedData))?.isRemembered == false)
                #expect(origin.statistics.requests == 3)
                try await restarted.diskCache?.removeAll()
                #expect(await restarted.diskCache?.knownMissing(ImageKey(url: url).cacheKey) == nil)
                #expect(await failure(pipeline(directory), ImageRequest(url: url))?.isRemembered == false)
                #expect(origin.statistics.requests == 4)
            }
        }
    }

    @Test("upstream's Cache-Control decides: no-store is never kept, max-age is, at most a day; a 410 too; a 500 never")
    func upstreamHeaders() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin({
                $0.faults = [FaultRule(pathContains: "/no-store", fault: .statusWithCacheControl(404, "no-store")),
                             FaultRule(pathContains: "/no-cache", fault: .statusWithCacheControl(404, "public, no-cache")),
                             FaultRule(pathContains: "/short", fault: .statusWithCacheControl(404, "public, max-age=5")),
                             FaultRule(pathContains: "/shared", fault: .statusWithCacheControl(404, "max-age=5, s-maxage=90")),
                             FaultRule(pathContains: "/year", fault: .statusWithCacheControl(404, "max-age=31536000")),
                             FaultRule(pathContains: "/gone", fault: .status(410)),
                             FaultRule(pathContains: "/broken", fault: .status(500))]
            }) { origin in
                let pipeline = pipeline(directory)
                func lifetime(_ name: String) async -> Int? {
                    let url = origin.imagesBase + "/" + name + ".jpg"
                    guard let known = await pipeline.diskCache?.knownMissing(ImageKey(url: url).cacheKey) else { return nil }
                    return Int(known.until.timeIntervalSince(known.storedAt).rounded())
                }
                for name in ["no-store", "no-cache", "short", "shared", "year", "gone", "broken"] {
                    let request = ImageRequest(url: origin.imagesBase + "/" + name + ".jpg")
                    _ = await failure(pipeline, request)
                    _ = await failure(pipeline, request)
                }
                let counts = origin.statistics.requestsByPath
                func asked(_ name: String) -> Int { counts.first { $0.key.hasSuffix("/" + name + ".jpg") }?.value ?? 0 }
                #expect(asked("no-store") == 2 && asked("no-cache") == 2 && asked("broken") >= 2, "\(counts)")
                #expect(asked("short") == 1 && asked("shared") == 1 && asked("year") == 1 && asked("gone") == 1, "\(counts)")
                #expect(await lifetime("no-store") == nil)
                #expect(await lifetime("broken") == nil)
                #expect(await lifetime("short") == 5)
                #expect(await lifetime("shared") == 90)  // a shared cache's own lifetime first
                #expect(await lifetime("year") == NegativeCache.maximumLifetime)
                #expect(await lifetime("gone") == 60)
                // Past its lifetime an answer is not read back, from disk or from memory.
                let short = ImageKey(url: origin.imagesBase + "/short.jpg")
                #expect(await pipeline.diskCache?.knownMissing(short.cacheKey, now: Date().addingTimeInterval(6)) == nil)
                let negatives = NegativeCache(disk: pipeline.diskCache, defaultLifetime: .seconds(60), logger: Logger(label: "test"))
                #expect(await negatives.answer(for: short) != nil)
                #expect(await negatives.answer(for: short, now: Date().addingTimeInterval(6)) == nil)
            }
        }
    }

    @Test("an image that appears: the answer stands until it expires or a reload finds the image, which then replaces it")
    func foundAfterAll() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin({ $0.faults = [FaultRule(pathContains: "/gold.jpg", fault: .failFirst(count: 1, status: 404))] }) { origin in
                let url = origin.imagesBase + "/gold.jpg"
                let pipeline = pipeline(directory)
                #expect(await failure(pipeline, ImageRequest(url: url))?.isRemembered == false)
                #expect(await failure(pipeline, ImageRequest(url: url))?.isRemembered == true)
                let reloaded = try await pipeline.image(for: ImageRequest(url: url, options: .reloadIgnoringCachedData))
                #expect(reloaded.outcome == .networkFetch)
                #expect(await pipeline.diskCache?.knownMissing(ImageKey(url: url).cacheKey) == nil)
                #expect(try await self.pipeline(directory).image(for: ImageRequest(url: url)).outcome == .diskHit)
                #expect(origin.statistics.requests == 2)
            }
        }
    }

    @Test("the lifetime upstream's headers give", arguments: [
        ([("Cache-Control", "public, max-age=30")], 30),
        ([("Cache-Control", "max-age=30, s-maxage=10")], 10),
        ([("cache-control", "no-store")], 0),
        ([("Cache-Control", "no-cache, max-age=30")], 0),
        ([("Expires", "Fri, 27 Nov 2026 12:02:00 GMT"), ("Date", "Fri, 27 Nov 2026 12:00:00 GMT")], 120),
        ([("Expires", "Fri, 27 Nov 2026 11:00:00 GMT"), ("Date", "Fri, 27 Nov 2026 12:00:00 GMT")], 0),
        ([("Expires", "0")], 0),
        ([("Cache-Control", "max-age=7"), ("Expires", "Fri, 27 Nov 2026 12:02:00 GMT")], 7),
        ([("Cache-Control", "public")], nil),
        ([], nil),
    ] as [([(String, String)], Int?)])
    func upstreamMaxAge(headers: [(String, String)], seconds: Int?) {
        #expect(NegativeCache.upstreamMaxAge(of: HTTPHeaders(headers)) == seconds)
    }
}

import Catalogue
import HTTPTypes
@testable import ImageCore
import Synchronization
import Testing
@testable import TileCacheService

/// The fast path's memo of resolved image paths: what it keeps, and that paths a client invents cannot grow it.
@Suite("ResolvedImagePaths", .timeLimit(.minutes(5)))
struct ResolvedImagePathsTests {
    let iron = ElementCatalogue.standard.element(number: 26)!

    @Test("a resolved path is resolved once; an unresolved one is not kept")
    func remembers() {
        let memo = ResolvedImagePaths()
        let calls = Atomic(0)
        let route = ImageRoute.all[0]
        for _ in 0..<3 {
            let resolved = memo.resolved("/api/v1/elements/26/thumbnail") {
                calls.add(1, ordering: .relaxed)
                return .init(route: route, element: iron)
            }
            #expect(resolved?.element.number == 26 && resolved?.route.template == "/api/v1/elements/{id}/thumbnail")
        }
        #expect(calls.load(ordering: .relaxed) == 1)
        for _ in 0..<3 {
            #expect(memo.resolved("/api/v1/elements/unobtainium/thumbnail") { calls.add(1, ordering: .relaxed); return nil } == nil)
        }
        #expect(calls.load(ordering: .relaxed) == 4 && memo.count == 1)
        // One resolution a path, shared by everything that keeps it (the answers remembered for each of its targets).
        let first = memo.resolved("/api/v1/elements/26/thumbnail") { nil }
        let second = memo.resolved("/api/v1/elements/26/thumbnail") { nil }
        #expect(first != nil && first === second)
    }

    @Test("more distinct paths than its capacity: it never holds more, and the newest is kept")
    func bounded() {
        let memo = ResolvedImagePaths()
        let route = ImageRoute.all[0]
        for index in 0...(ResolvedImagePaths.capacity * 2) {
            _ = memo.resolved("/api/v1/elements/\(index)/thumbnail") { .init(route: route, element: iron) }
            #expect(memo.count <= ResolvedImagePaths.capacity)
        }
        let calls = Atomic(0)
        _ = memo.resolved("/api/v1/elements/\(ResolvedImagePaths.capacity * 2)/thumbnail") { calls.add(1, ordering: .relaxed); return nil }
        #expect(calls.load(ordering: .relaxed) == 0)
    }
}

/// The fast path's memo of answers: bounded as the paths' memo is.
@Suite("PreparedImageAnswers", .timeLimit(.minutes(5)))
struct PreparedImageAnswersTests {
    static func prepared(_ index: Int) -> PreparedImageAnswers.Prepared {
        let iron = ElementCatalogue.standard.element(number: 26)!
        let inputs = PreparedImageAnswers.Inputs(validators: ImageValidators(etag: "\"\(index)\"", lastModified: "Sat, 01 Nov 2025 00:00:00 GMT"),
                                                 contentType: "image/jpeg", source: "memory", byteCount: index)
        return .init(route: .init(route: ImageRoute.all[0], element: iron),
                     request: ImageRequest(url: "http://origin.test/\(index).jpg"), options: ImageOptions(processing: .none, negotiated: false),
                     inputs: inputs, head: HTTPResponse(status: .ok))
    }

    @Test("an answer is kept per target and reading key; more distinct ones than its capacity: it never holds more, keeps the newest and starts again empty; a key over longestKey is not kept")
    func bounded() {
        let memo = PreparedImageAnswers()
        memo.remember(Self.prepared(0), target: "/t?w=1", readingKey: "image/webp")
        #expect(memo.prepared(target: "/t?w=1", readingKey: "image/webp")?.inputs.byteCount == 0)
        #expect(memo.prepared(target: "/t?w=1", readingKey: nil) == nil && memo.prepared(target: "/t?w=2", readingKey: "image/webp") == nil)
        for index in 1...(PreparedImageAnswers.capacity * 2) {
            memo.remember(Self.prepared(index), target: "/t/\(index)", readingKey: nil)
            #expect(memo.count <= PreparedImageAnswers.capacity)
        }
        let newest = PreparedImageAnswers.capacity * 2
        #expect(memo.prepared(target: "/t/\(newest)", readingKey: nil)?.inputs.byteCount == newest)
        // Full again: it starts again empty, with the newest.
        let before = memo.count
        for index in 1...(PreparedImageAnswers.capacity - before + 1) { memo.remember(Self.prepared(index), target: "/u/\(index)", readingKey: nil) }
        #expect(memo.count == 1 && memo.prepared(target: "/t/\(newest)", readingKey: nil) == nil)
        // A target and reading key longer than `longestKey` together are not kept.
        let long = String(repeating: "a", count: PreparedImageAnswers.longestKey)
        memo.remember(Self.prepared(1), target: "/t", readingKey: long)
        #expect(memo.prepared(target: "/t", readingKey: long) == nil)
        memo.remember(Self.prepared(1), target: "/t", readingKey: String(long.dropFirst(2)))
        #expect(memo.prepared(target: "/t", readingKey: String(long.dropFirst(2))) != nil)
    }
}

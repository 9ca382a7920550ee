@testable import ImageCore
import Testing
import TestSupport

@Suite("WorkLimiter", .timeLimit(.minutes(5)))
struct WorkLimiterTests {
    @Test("concurrency at once, queue more waiting, the next refused at once; a freed slot lets the queued one run")
    func bound() async throws {
        let limiter = WorkLimiter(concurrency: 1, queue: 1)
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let running = Task { try await limiter.run { for await _ in gate { break }; return "first" } }
        try await waitUntil("the first runs") { limiter.current == 1 }
        let queued = Task { try await limiter.run { "second" } }
        try await waitUntil("the second queues") { limiter.current == 2 }
        // Full: one running, one waiting. The third is refused without waiting.
        #expect(try await limiter.run { "third" } == nil)
        open.yield()
        #expect(try await running.value == "first")
        #expect(try await queued.value == "second")
        #expect(limiter.current == 0)
        #expect(try await limiter.run { "again" } == "again")
    }
}

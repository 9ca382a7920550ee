@testable import ImageCore
import NIOConcurrencyHelpers
import Testing
import TestSupport

/// The coalescer's waiting (through `Suspension`): deadlines, cancellation before and after queueing, the last caller.
@Suite("TaskCoalescer", .timeLimit(.minutes(5)))
struct TaskCoalescerTests {
    /// An operation that waits until `open()` (or its cancellation), counting its runs.
    final class Gate: Sendable {
        private let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        let runs = NIOLockedValueBox(0)
        let cancelled = NIOLockedValueBox(false)

        func operation(_ value: Int) -> @Sendable () async throws -> Int {
            { [self] in
                runs.withLockedValue { $0 += 1 }
                for await _ in stream { break }
                if Task.isCancelled { cancelled.withLockedValue { $0 = true } }
                return value
            }
        }

        func open() { continuation.finish() }
    }

    struct Expired: Error {}

    @Test("a caller past its deadline leaves with the deadline's error at once; the operation goes on, and a later caller joins it")
    func deadline() async throws {
        let coalescer = TaskCoalescer<String, Int>(), gate = Gate()
        let started = ContinuousClock.now
        await #expect(throws: Expired.self) {
            try await coalescer.run("k", until: .now + .milliseconds(50), expired: { Expired() }, operation: gate.operation(7))
        }
        // The gate is still shut, so leaving at all is leaving before the operation ends; the bound says the deadline,
        // not some later timeout, ended the wait. It is loose: at `make test`'s start, hundreds of tests queue on the
        // cooperative pool's two threads, and a resumed caller waited there 5.05 s once (2026-12-02, a 2-core host).
        #expect(ContinuousClock.now - started < TestTime.scaled(.seconds(30)))
        #expect(coalescer.inFlightCount == 1, "the operation goes on without its caller")
        let later = Task { try await coalescer.run("k", operation: gate.operation(8)) }
        try await waitUntil("the later caller waits") { coalescer.inFlightCount == 1 && gate.runs.withLockedValue { $0 } == 1 }
        gate.open()
        let (value, joined) = try await later.value
        #expect(value == 7 && joined, "it joined the first operation")
        #expect(gate.runs.withLockedValue { $0 } == 1 && !gate.cancelled.withLockedValue { $0 })
    }

    @Test("the last caller, cancelled, cancels the operation and is told how it ended; one of two leaves and the other gets the value")
    func cancellation() async throws {
        let coalescer = TaskCoalescer<String, Int>()
        // Two callers; one is cancelled and leaves at once; the other gets the value.
        let gate = Gate()
        let joinedFlags = NIOLockedValueBox<[Bool]>([])
        let first = Task { try await coalescer.run("a", registered: { joined in joinedFlags.withLockedValue { $0.append(joined) } }, operation: gate.operation(1)) }
        try await waitUntil("the first caller's operation runs") { gate.runs.withLockedValue { $0 } == 1 }
        let second = Task { try await coalescer.run("a", registered: { joined in joinedFlags.withLockedValue { $0.append(joined) } }, operation: gate.operation(2)) }
        try await waitUntil("the second caller joins") { joinedFlags.withLockedValue { $0 } == [false, true] }
        second.cancel()
        await #expect(throws: CancellationError.self) { try await second.value }
        gate.open()
        #expect(try await first.value.0 == 1 && !gate.cancelled.withLockedValue { $0 })

        // The only caller, cancelled: the operation is cancelled, and the caller gets what it returned anyway.
        let lone = Gate()
        let only = Task { try await coalescer.run("b", operation: lone.operation(3)) }
        try await waitUntil("the lone operation runs") { lone.runs.withLockedValue { $0 } == 1 }
        only.cancel()
        #expect(try await only.value.0 == 3)
        #expect(lone.cancelled.withLockedValue { $0 })
    }

    @Test("cancelled before it waits, a caller throws at once and starts nothing")
    func cancelledEarly() async throws {
        let coalescer = TaskCoalescer<String, Int>(), gate = Gate()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await coalescer.run("c", operation: gate.operation(1))
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(gate.runs.withLockedValue { $0 } == 0 && coalescer.inFlightCount == 0)
    }
}

@testable import ImageCore
import NIOConcurrencyHelpers
import Testing
import TestSupport

@Suite("AsyncSemaphore", .timeLimit(.minutes(5)))
struct AsyncSemaphoreTests {
    @Test("a waiter cancelled in the queue leaves without a permit; the permit passes on in FIFO order")
    func cancellationAndOrder() async throws {
        let semaphore = AsyncSemaphore(limit: 1)
        try await semaphore.acquire()
        let cancelled = Task { try await semaphore.acquire() }
        try await waitUntil("the first waiter queues") { semaphore.waiterCount == 1 }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }

        let order = OrderLog()
        let first = Task { try await semaphore.acquire(); await order.append(1); semaphore.release() }
        try await waitUntil("the first queues") { semaphore.waiterCount == 1 }
        let second = Task { try await semaphore.acquire(); await order.append(2); semaphore.release() }
        try await waitUntil("the second queues behind it") { semaphore.waiterCount == 2 }
        semaphore.release()  // the first holder leaves: the cancelled waiter must not take the permit
        try await first.value
        try await second.value
        #expect(await order.values == [1, 2])
        try await semaphore.acquire()  // exactly one permit is left
        semaphore.release()
    }

    @Test("cancelled before it starts waiting, acquire throws and holds nothing")
    func cancelledEarly() async throws {
        let semaphore = AsyncSemaphore(limit: 1)
        try await semaphore.acquire()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await semaphore.acquire()
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        semaphore.release()
        try await semaphore.acquire()
    }
}

extension AsyncSemaphoreTests {
    @Test("a permit released while a caller is between finding none and queueing goes to that caller, never stranded")
    func releaseRacingQueueing() async throws {
        var stranded = 0
        for trial in 0..<3_000 {
            let semaphore = AsyncSemaphore(limit: 1)
            try await semaphore.acquire()
            let holds = NIOLockedValueBox(false)
            let waiter = Task {
                try await semaphore.acquire()
                holds.withLockedValue { $0 = true }
            }
            // Spin a varying few microseconds, so that over the trials the release lands everywhere in the waiter's
            // acquire, the gap between finding no permit and queueing included.
            let until = ContinuousClock.now + .nanoseconds(trial % 60 * 200)
            while ContinuousClock.now < until {}
            semaphore.release()
            // Nobody else will release: a waiter queued behind the free permit would wait forever.
            let deadline = ContinuousClock.now + .seconds(2)
            while !holds.withLockedValue({ $0 }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
            if !holds.withLockedValue({ $0 }) {
                stranded += 1
                waiter.cancel()
            }
            _ = await waiter.result
        }
        #expect(stranded == 0)
    }
}

actor OrderLog {
    var values: [Int] = []
    func append(_ value: Int) { values.append(value) }
}

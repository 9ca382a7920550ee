@testable import ImageCore
import Testing

@Suite("AsyncSemaphore")
struct AsyncSemaphoreTests {
    @Test("a waiter cancelled in the queue leaves without a permit; the permit passes on in FIFO order")
    func cancellationAndOrder() async throws {
        let semaphore = AsyncSemaphore(limit: 1)
        try await semaphore.acquire()
        let cancelled = Task { try await semaphore.acquire() }
        try await Task.sleep(for: .milliseconds(20))
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }

        let order = OrderLog()
        let first = Task { try await semaphore.acquire(); await order.append(1); semaphore.release() }
        try await Task.sleep(for: .milliseconds(20))
        let second = Task { try await semaphore.acquire(); await order.append(2); semaphore.release() }
        try await Task.sleep(for: .milliseconds(20))
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

actor OrderLog {
    var values: [Int] = []
    func append(_ value: Int) { values.append(value) }
}

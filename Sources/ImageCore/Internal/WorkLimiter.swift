import NIOConcurrencyHelpers

/// A bound on one kind of work: `concurrency` at once, at most `queue` more waiting; past that, `run` refuses at once
/// (the caller answers "overloaded", not after a wait). The thumbnailer's bound (`ImagePipeline.Configuration
/// .maxConcurrentProcessing` and `maxQueuedProcessing`).
///
/// Thread-safety: any task may run work; the counts are behind a lock, the waiting behind an `AsyncSemaphore`.
final class WorkLimiter: Sendable {
    let concurrency: Int
    let queue: Int
    private let slots: AsyncSemaphore
    /// Work running or waiting now.
    private let demand = NIOLockedValueBox(0)

    init(concurrency: Int, queue: Int) {
        precondition(concurrency > 0 && queue >= 0, "a work limit needs concurrency > 0 and queue >= 0")
        self.concurrency = concurrency
        self.queue = queue
        slots = AsyncSemaphore(limit: concurrency)
    }

    /// Work running or waiting now.
    var current: Int { demand.withLockedValue { $0 } }

    /// `body`'s result, run once a slot is free; nil at once when `concurrency + queue` are running or waiting.
    ///
    /// - Throws: `CancellationError` when the task is cancelled while it waits; `body`'s error.
    func run<T: Sendable>(_ body: () async throws -> T) async throws -> T? {
        let admitted = demand.withLockedValue { count -> Bool in
            guard count < concurrency + queue else { return false }
            count += 1
            return true
        }
        guard admitted else { return nil }
        defer { demand.withLockedValue { $0 -= 1 } }
        try await slots.acquire()
        defer { slots.release() }
        return try await body()
    }
}

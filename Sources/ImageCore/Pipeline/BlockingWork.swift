import NIOConcurrencyHelpers
import NIOPosix

/// The one place work that blocks a thread (file I/O, SHA-256, decoding, resizing) is run from async code.
///
/// It runs on NIO's thread pool for blocking work (`NIOThreadPool.singleton`, the pool NIOFileSystem uses), never on
/// Swift's cooperative threads, which must stay free to run tasks: with two cores there are two of them, and one
/// decode on each would stall every timer, deadline and socket callback in the process.
public enum BlockingWork {
    /// The one thread of `runLongCPUWork`: a pool of one, started on first use and kept for the process's life.
    static let longCPUWorkThread: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        return pool
    }()

    /// The result of `body`, run on the blocking pool while the calling task is suspended; a body that cannot fail
    /// makes a call that cannot fail.
    ///
    /// The body always runs, even when the calling task is cancelled while it waits for a thread: what it does (a
    /// store, an alias, a removal) is part of a step that its caller accounts for, so it must not silently not happen.
    /// NIO's own `runIfActive` skips a cancelled task's body; this does not.
    ///
    /// - Throws: `body`'s error.
    public static func run<T: Sendable, Failure: Error>(_ body: @escaping @Sendable () throws(Failure) -> T) async throws(Failure) -> T {
        let work = OneShot(body)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, Failure>, Never>) in
            // The singleton pool is perpetual: `submit` runs every item with `.active`, so the state is not read.
            NIOThreadPool.singleton.submit { _ in continuation.resume(returning: work.run()) }
        }
        return try result.get()
    }

    /// The result of `body`, run on the one thread kept for long CPU-bound work while the calling task is suspended:
    /// for work that takes seconds (a hit-rate replay) and would otherwise hold one of the few threads of a shared
    /// pool. On two cores the blocking pool also runs every decode and file read, and the cooperative pool every socket
    /// callback; a replay on either stalls them. Such jobs run one at a time, in order: several at once, each on a
    /// thread of its own, took the kernel's time slices from the event loops (a test's in-process origin went two
    /// seconds without answering).
    ///
    /// - Throws: `body`'s error.
    public static func runLongCPUWork<T: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        let work = OneShot(body)
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, Failure>, Never>) in
            // Perpetual, like the singleton: `submit` runs every item with `.active`.
            longCPUWorkThread.submit { _ in continuation.resume(returning: work.run()) }
        }
        return try result.get()
    }

    /// A body run once and let go before its result is handed back: the pool keeps its work item (and so what the body
    /// captured) until after the caller has resumed, so without this a disk cache, a buffer or a pipeline outlived the
    /// `await` that used it by a moment (a test that reopened a cache's index found the old one still writing to it).
    ///
    /// (The body is kept as a closure returning a `Result`: a box holding the typed-throwing closure itself crashed the
    /// Swift 6.3.1 optimizer in release builds, in ARCSequenceOpts.)
    private final class OneShot<T: Sendable, Failure: Error>: Sendable {
        private let work: NIOLockedValueBox<(@Sendable () -> Result<T, Failure>)?>

        init(_ body: @escaping @Sendable () throws(Failure) -> T) {
            work = NIOLockedValueBox { Result { () throws(Failure) -> T in try body() } }
        }

        func run() -> Result<T, Failure> {
            let work = self.work.withLockedValue { work in
                defer { work = nil }
                return work
            }
            return work!()
        }
    }

    /// `body` applied to every item on the blocking pool, at most `concurrency` at once, the results in the items'
    /// order: the one bounded fan-out of blocking work over a list (inspect, thumbnail).
    public static func map<Item: Sendable, T: Sendable>(_ items: [Item], concurrency: Int,
                                                        _ body: @escaping @Sendable (Item) -> T) async -> [T] {
        var results = [T?](repeating: nil, count: items.count)
        await withTaskGroup(of: (Int, T).self) { group in
            var next = 0
            func addNext() {
                guard next < items.count else { return }
                let index = next
                next += 1
                group.addTask { (index, await run { body(items[index]) }) }
            }
            for _ in 0..<max(1, concurrency) { addNext() }
            for await (index, result) in group {
                results[index] = result
                addNext()
            }
        }
        return results.map { $0! }
    }
}

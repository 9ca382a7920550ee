import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Waiting for a task with a deadline: the pipeline's request timeout and the service's database calls.
public enum Deadline {
    /// `work`'s result, or `expired()` thrown at `deadline` if `work` has none by then; `onExpiry` runs at that moment
    /// (to cancel `work`, say; by default it is left running, for others that want its result).
    ///
    /// The timer is an event loop's scheduled task, cancelled when the result comes first. Not a task sleeping until
    /// the deadline: on Linux a cancelled `Task.sleep` keeps its task and its dispatch timer until the deadline passes,
    /// so every request past the memory tier held about 600 bytes for the whole request timeout (60 s when serving): a
    /// serve soak at 15,000 disk hits a second grew by 4 MB/s (issue 19).
    public static func first<Value: Sendable>(of work: Task<Value, any Error>, orThrow expired: @escaping @Sendable () -> any Error,
                                              at deadline: ContinuousClock.Instant,
                                              onExpiry: @escaping @Sendable () -> Void = {}) async throws -> Value {
        let resumed = NIOLockedValueBox(false)
        let timer = NIOLockedValueBox<Scheduled<Void>?>(nil)
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            @Sendable func resume(_ result: Result<Value, any Error>) {
                let first = resumed.withLockedValue { done in
                    defer { done = true }
                    return !done
                }
                guard first else { return }
                timer.withLockedValue { $0?.cancel() }
                continuation.resume(with: result)
            }
            // The timer is kept before the result is awaited, so `resume` always finds it to cancel.
            timer.withLockedValue { $0 = MultiThreadedEventLoopGroup.singleton.any()
                .scheduleTask(in: .nanoseconds(max(0, ContinuousClock.now.duration(to: deadline).nanoseconds))) {
                    onExpiry()
                    resume(.failure(expired()))
                } }
            Task { resume(await work.result) }
        }
    }
}

extension Duration {
    /// Whole nanoseconds.
    public var nanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }
}

import NIOConcurrencyHelpers

/// Work with a deadline that is not waited for past it: the service's database calls (a query in flight on a
/// connection whose server died may not answer cancellation, so a task group, which waits for its children, would not
/// keep the bound), and tests that must not hang. The pipeline's own deadline is the coalescer's (`TaskCoalescer`).
public enum Deadline {
    /// `work`'s result, or `expired()` thrown at `deadline` if `work` has none by then: `work` is cancelled then but not
    /// waited for, and `onExpiry` runs (to close a connection, say). A cancelled caller stops waiting the same way.
    ///
    /// `work` runs in a task of its own, since it may outlive the wait; the wait is `Suspension`'s, whose deadline is
    /// an event loop's timer, cancelled when the result comes first.
    public static func first<Value: Sendable>(of work: @escaping @Sendable () async throws -> Value,
                                              orThrow expired: @escaping @Sendable () -> any Error,
                                              at deadline: ContinuousClock.Instant,
                                              onExpiry: @escaping @Sendable () -> Void = {}) async throws -> Value {
        let slot = NIOLockedValueBox(DeadlineSlot<Value>())
        return try await Suspension.wait(in: slot, until: deadline, expired: expired) { state, _, continuation in
            state.waiter = continuation
            return {
                let worker = Task {
                    let result: Result<Value, any Error>
                    do { result = .success(try await work()) } catch { result = .failure(error) }
                    let waiter = slot.withLockedValue { slot in
                        defer { slot.waiter = nil }
                        return slot.waiter
                    }
                    waiter?.resume(with: result)
                }
                slot.withLockedValue { $0.worker = worker }
            }
        } remove: { state, _, removal in
            defer { state.waiter = nil }
            let worker = state.worker
            return Suspension.Removed(continuation: state.waiter, then: {
                worker?.cancel()
                if removal == .expired { onExpiry() }
            })
        }
    }
}

/// A `Deadline.first` wait: its waiter, and the task running the work (to cancel).
private struct DeadlineSlot<Value: Sendable>: Sendable {
    var waiter: CheckedContinuation<Value, any Error>?
    var worker: Task<Void, Never>?
}

extension Duration {
    /// Whole nanoseconds.
    public var nanoseconds: Int64 { components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000 }
}

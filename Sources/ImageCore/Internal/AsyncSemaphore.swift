import DequeModule
import NIOConcurrencyHelpers

/// A counting semaphore for tasks: `acquire` suspends (in FIFO order) while `limit` holders are inside.
///
/// Thread-safety: any task may acquire and release. A task cancelled while waiting leaves the queue and throws
/// `CancellationError`; it never holds a permit (`Suspension` does the waiting).
package final class AsyncSemaphore: Sendable {
    private struct State: Sendable {
        var available: Int
        var waiters: Deque<(ticket: Suspension.Ticket, continuation: CheckedContinuation<Void, any Error>)> = []
    }

    private let state: NIOLockedValueBox<State>

    package init(limit: Int) {
        precondition(limit > 0, "semaphore limit must be positive")
        state = NIOLockedValueBox(State(available: limit))
    }

    package func acquire() async throws {
        let taken = state.withLockedValue { state in
            guard state.available > 0 else { return false }
            state.available -= 1
            return true
        }
        guard !taken else { return }
        try await Suspension.wait(in: state) { state, ticket, continuation in
            // A permit released since this caller found none (with no waiter to hand it to) is taken now: queueing
            // behind it would wait for a release that may never come.
            if state.available > 0 {
                state.available -= 1
                continuation.resume()
            } else {
                state.waiters.append((ticket, continuation))
            }
            return nil
        } remove: { state, ticket, _ in
            guard let index = state.waiters.firstIndex(where: { $0.ticket == ticket }) else { return .nothing }
            return Suspension.Removed(continuation: state.waiters.remove(at: index).continuation, then: nil)
        }
    }

    /// Number of callers queued for a permit (for tests: a caller is counted once it waits).
    var waiterCount: Int { state.withLockedValue { $0.waiters.count } }

    package func release() {
        let next = state.withLockedValue { state -> CheckedContinuation<Void, any Error>? in
            guard let first = state.waiters.popFirst() else {
                state.available += 1
                return nil
            }
            return first.continuation
        }
        next?.resume()
    }
}

import NIOConcurrencyHelpers

/// A counting semaphore for tasks: `acquire` suspends (in FIFO order) while `limit` holders are inside.
///
/// Thread-safety: any task may acquire and release. A task cancelled while waiting leaves the queue and throws
/// `CancellationError`; it never holds a permit.
final class AsyncSemaphore: Sendable {
    private struct State {
        var available: Int
        var nextID: UInt64 = 0
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
        /// Waiters whose id was issued but who have not queued their continuation yet.
        var unregistered: Set<UInt64> = []
        /// Of those, the ones cancelled before they queued.
        var cancelledEarly: Set<UInt64> = []
    }

    private let state: NIOLockedValueBox<State>

    init(limit: Int) {
        precondition(limit > 0, "semaphore limit must be positive")
        state = NIOLockedValueBox(State(available: limit))
    }

    func acquire() async throws {
        let id: UInt64? = state.withLockedValue { state in
            if state.available > 0 {
                state.available -= 1
                return nil
            }
            state.nextID += 1
            state.unregistered.insert(state.nextID)
            return state.nextID
        }
        guard let id else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Registration { case cancelled, admitted, queued }
                let registration = state.withLockedValue { state -> Registration in
                    state.unregistered.remove(id)
                    if state.cancelledEarly.remove(id) != nil { return .cancelled }
                    // A permit released since this caller found none (with no waiter queued to hand it to) is taken
                    // now: queueing behind it would wait for a release that may never come.
                    if state.available > 0 {
                        state.available -= 1
                        return .admitted
                    }
                    state.waiters.append((id, continuation))
                    return .queued
                }
                switch registration {
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .admitted: continuation.resume()
                case .queued: break
                }
            }
        } onCancel: {
            let continuation = state.withLockedValue { state -> CheckedContinuation<Void, any Error>? in
                if let index = state.waiters.firstIndex(where: { $0.id == id }) {
                    return state.waiters.remove(at: index).continuation
                }
                // Not queued yet: tell it to give up when it queues. Otherwise it already holds a permit.
                if state.unregistered.contains(id) { state.cancelledEarly.insert(id) }
                return nil
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    func release() {
        let next = state.withLockedValue { state -> CheckedContinuation<Void, any Error>? in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst().continuation
        }
        next?.resume()
    }
}

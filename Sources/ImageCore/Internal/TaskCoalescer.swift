import NIOConcurrencyHelpers

/// Runs at most one operation per key at a time; concurrent callers for the same key share its result.
///
/// A cancelled caller that others still wait with stops waiting at once, and the operation goes on for them. The last
/// caller, cancelled, cancels the operation and waits for how it ends: its result when it finished its work anyway
/// (an image already stored is reported as loaded, never as cancelled), else its cancellation error. So what an
/// operation did and what its last caller is told never disagree. Thread-safety: callable from any task.
final class TaskCoalescer<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Group {
        var generation: UInt64
        var waiters: [UInt64: CheckedContinuation<Value, any Error>]
        var task: Task<Void, Never>?
        /// The last caller was cancelled: the operation is cancelled, and no new caller may join it.
        var cancelled = false
    }

    private struct State {
        var groups: [Key: Group] = [:]
        /// Waiters of cancelled operations replaced by a new one for the same key, by generation.
        var draining: [UInt64: [UInt64: CheckedContinuation<Value, any Error>]] = [:]
        var nextID: UInt64 = 0
        var unregistered: Set<UInt64> = []
        var cancelledEarly: Set<UInt64> = []
    }

    private let state = NIOLockedValueBox(State())

    /// An idle coalescer.
    init() {}

    /// Number of keys with an operation in flight.
    var inFlightCount: Int { state.withLockedValue { $0.groups.count } }

    /// The result of `operation` for `key`, run once for all concurrent callers.
    ///
    /// - Returns: the value, and whether this caller joined an operation another caller had started.
    func run(_ key: Key, operation: @escaping @Sendable () async throws -> Value) async throws -> (Value, joined: Bool) {
        let id = state.withLockedValue { state in
            state.nextID += 1
            state.unregistered.insert(state.nextID)
            return state.nextID
        }
        let joined = NIOLockedValueBox(false)
        let value = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let start: UInt64? = state.withLockedValue { state in
                    state.unregistered.remove(id)
                    if state.cancelledEarly.remove(id) != nil {
                        continuation.resume(throwing: CancellationError())
                        return nil
                    }
                    if let group = state.groups[key], !group.cancelled {
                        state.groups[key]!.waiters[id] = continuation
                        joined.withLockedValue { $0 = true }
                        return nil
                    }
                    if let cancelled = state.groups[key] {
                        // A cancelled operation still finishing: this caller starts afresh under another generation,
                        // and the old one's waiter is moved aside so `finish` still reaches it.
                        state.draining[cancelled.generation] = cancelled.waiters
                    }
                    state.groups[key] = Group(generation: id, waiters: [id: continuation])
                    return id
                }
                guard let generation = start else { return }
                let task = Task {
                    let result: Result<Value, any Error>
                    do { result = .success(try await operation()) } catch { result = .failure(error) }
                    self.finish(key, generation: generation, with: result)
                }
                // Cancel at once when the group was replaced, or its last caller cancelled before the task was stored.
                let orphaned = state.withLockedValue { state in
                    guard state.groups[key]?.generation == generation else { return true }
                    state.groups[key]!.task = task
                    return state.groups[key]!.cancelled
                }
                if orphaned { task.cancel() }
            }
        } onCancel: {
            let (continuation, task) = state.withLockedValue { state -> (CheckedContinuation<Value, any Error>?, Task<Void, Never>?) in
                if state.unregistered.contains(id) {
                    state.cancelledEarly.insert(id)
                    return (nil, nil)
                }
                guard var group = state.groups[key], group.waiters[id] != nil else { return (nil, nil) }
                if group.waiters.count == 1 {
                    // The last caller: cancel the operation and wait for `finish` to report how it ended.
                    group.cancelled = true
                    state.groups[key] = group
                    return (nil, group.task)
                }
                let continuation = group.waiters.removeValue(forKey: id)
                state.groups[key] = group
                return (continuation, nil)
            }
            continuation?.resume(throwing: CancellationError())
            task?.cancel()
        }
        return (value, joined.withLockedValue { $0 })
    }

    private func finish(_ key: Key, generation: UInt64, with result: Result<Value, any Error>) {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Value, any Error>] in
            if let drained = state.draining.removeValue(forKey: generation) { return Array(drained.values) }
            guard let group = state.groups[key], group.generation == generation else { return [] }
            state.groups[key] = nil
            return Array(group.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }
}

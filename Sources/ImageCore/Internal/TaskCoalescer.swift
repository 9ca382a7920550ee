import NIOConcurrencyHelpers

/// Runs at most one operation per key at a time; concurrent callers for the same key share its result.
///
/// A caller that is cancelled stops waiting at once; the shared operation is cancelled only when no caller is left.
/// Thread-safety: callable from any task.
public final class TaskCoalescer<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Group {
        var generation: UInt64
        var waiters: [UInt64: CheckedContinuation<Value, any Error>]
        var task: Task<Void, Never>?
    }

    private struct State {
        var groups: [Key: Group] = [:]
        var nextID: UInt64 = 0
        var unregistered: Set<UInt64> = []
        var cancelledEarly: Set<UInt64> = []
    }

    private let state = NIOLockedValueBox(State())

    /// An idle coalescer.
    public init() {}

    /// Number of keys with an operation in flight.
    public var inFlightCount: Int { state.withLockedValue { $0.groups.count } }

    /// The result of `operation` for `key`, run once for all concurrent callers.
    ///
    /// - Returns: the value, and whether this caller joined an operation another caller had started.
    public func run(_ key: Key, operation: @escaping @Sendable () async throws -> Value) async throws -> (Value, joined: Bool) {
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
                    if state.groups[key] != nil {
                        state.groups[key]!.waiters[id] = continuation
                        joined.withLockedValue { $0 = true }
                        return nil
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
                let orphaned = state.withLockedValue { state in
                    guard state.groups[key]?.generation == generation else { return true }
                    state.groups[key]!.task = task
                    return false
                }
                if orphaned { task.cancel() }
            }
        } onCancel: {
            let (continuation, task) = state.withLockedValue { state -> (CheckedContinuation<Value, any Error>?, Task<Void, Never>?) in
                if state.unregistered.contains(id) {
                    state.cancelledEarly.insert(id)
                    return (nil, nil)
                }
                guard var group = state.groups[key], let continuation = group.waiters.removeValue(forKey: id) else {
                    return (nil, nil)
                }
                if group.waiters.isEmpty {
                    state.groups[key] = nil
                    return (continuation, group.task)
                }
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
            guard let group = state.groups[key], group.generation == generation else { return [] }
            state.groups[key] = nil
            return Array(group.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }
}

import NIOConcurrencyHelpers

/// Runs at most one operation per key at a time; concurrent callers for the same key share its result.
///
/// A cancelled caller that others still wait with stops waiting at once, and the operation goes on for them. The last
/// caller, cancelled, cancels the operation and waits for how it ends: its result when it finished its work anyway
/// (an image already stored is reported as loaded, never as cancelled), else its cancellation error. So what an
/// operation did and what its last caller is told never disagree. A caller whose deadline passes leaves with the
/// deadline's error and the operation goes on, for the others and to fill the caches. The operation runs in a task of
/// its own, since it may outlive every caller; the callers wait through `Suspension`. Thread-safety: callable from any
/// task.
final class TaskCoalescer<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private typealias Waiters = [Suspension.Ticket: CheckedContinuation<Value, any Error>]

    private struct Group: Sendable {
        var generation: UInt64
        var waiters: Waiters
        var task: Task<Void, Never>?
        /// The last caller was cancelled: the operation is cancelled, and no new caller may join it.
        var cancelled = false
    }

    private struct State: Sendable {
        var groups: [Key: Group] = [:]
        /// Waiters of cancelled operations replaced by a new one for the same key, by generation.
        var draining: [UInt64: Waiters] = [:]
    }

    private let state = NIOLockedValueBox(State())

    /// An idle coalescer.
    init() {}

    /// Number of keys with an operation in flight.
    var inFlightCount: Int { state.withLockedValue { $0.groups.count } }

    /// Number of callers waiting on operations in flight (for tests: a caller is counted once it waits).
    var waiterCount: Int { state.withLockedValue { $0.groups.values.reduce(0) { $0 + $1.waiters.count } } }

    /// The result of `operation` for `key`, run once for all concurrent callers; `expired()` thrown at `deadline`.
    ///
    /// - Parameter registered: called once the caller waits, with whether it joined an operation another caller had
    ///   started (under the coalescer's lock: keep it short).
    /// - Returns: the value, and whether this caller joined an operation another caller had started.
    func run(_ key: Key, until deadline: ContinuousClock.Instant? = nil, expired: @escaping @Sendable () -> any Error = { CancellationError() },
             registered: @Sendable (_ joined: Bool) -> Void = { _ in },
             operation: @escaping @Sendable () async throws -> Value) async throws -> (Value, joined: Bool) {
        let joined = NIOLockedValueBox(false)
        let value: Value = try await Suspension.wait(in: state, until: deadline, expired: expired) { state, ticket, continuation in
            if let group = state.groups[key], !group.cancelled {
                state.groups[key]!.waiters[ticket] = continuation
                joined.withLockedValue { $0 = true }
                registered(true)
                return nil
            }
            if let cancelled = state.groups[key] {
                // A cancelled operation still finishing: this caller starts afresh under another generation, and the
                // old one's waiters are moved aside so `finish` still reaches them.
                state.draining[cancelled.generation] = cancelled.waiters
            }
            let generation = ticket.id
            state.groups[key] = Group(generation: generation, waiters: [ticket: continuation])
            registered(false)
            return { self.start(key, generation: generation, operation) }
        } remove: { state, ticket, removal in
            guard var group = state.groups[key], group.waiters[ticket] != nil else {
                // Moved aside with a replaced operation: leave it there too.
                for (generation, var waiters) in state.draining {
                    if let continuation = waiters.removeValue(forKey: ticket) {
                        state.draining[generation] = waiters
                        return Suspension.Removed(continuation: continuation, then: nil)
                    }
                }
                return .nothing
            }
            if removal == .cancelled, group.waiters.count == 1 {
                // The last caller: cancel the operation and wait for `finish` to report how it ended.
                group.cancelled = true
                state.groups[key] = group
                let task = group.task
                return Suspension.Removed(continuation: nil, then: { task?.cancel() })
            }
            let continuation = group.waiters.removeValue(forKey: ticket)
            state.groups[key] = group
            return Suspension.Removed(continuation: continuation, then: nil)
        }
        return (value, joined.withLockedValue { $0 })
    }

    /// Starts the operation of `key`'s group `generation`; cancels it at once when its last caller was cancelled (or the
    /// group replaced) before the task was stored.
    private func start(_ key: Key, generation: UInt64, _ operation: @escaping @Sendable () async throws -> Value) {
        let task = Task {
            let result: Result<Value, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            self.finish(key, generation: generation, with: result)
        }
        let orphaned = state.withLockedValue { state in
            guard state.groups[key]?.generation == generation else { return true }
            state.groups[key]!.task = task
            return state.groups[key]!.cancelled
        }
        if orphaned { task.cancel() }
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

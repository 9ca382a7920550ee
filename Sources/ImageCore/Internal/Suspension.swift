import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Suspends the calling task until its owner resumes it, with cancellation and an optional deadline handled here,
/// once: the one home of the bookkeeping that waiting with cancellation needs (a lost wake-up shipped once when the
/// semaphore and the coalescer each kept their own). `AsyncSemaphore` and `TaskCoalescer` wait through it.
///
/// The owner keeps its state in a `NIOLockedValueBox` and, in `register`, either resumes the waiter's continuation at
/// once (a permit is free) or stores it under the waiter's `Ticket`. When the task is cancelled, or its deadline
/// passes, `remove` takes the continuation out of the state if it is still there (it is then resumed with
/// `CancellationError` or the deadline's error); it may also leave it there (the coalescer's last waiter waits for the
/// cancelled operation to end). A task cancelled, or past its deadline, before it has registered is told so when it
/// registers, and is never stored. `register` and `remove` run under the owner's lock; the work they return runs after
/// it is released.
///
/// The deadline is a scheduled task on an event loop of its own (`timers`), cancelled when the wait ends: not a task
/// sleeping until the deadline, since on Linux a cancelled `Task.sleep` keeps its task and dispatch timer until the deadline passes (600
/// bytes for every request's whole timeout, 4 MB/s in a serve soak: issue 19).
enum Suspension {
    /// One wait, as its owner's state knows it.
    struct Ticket: Hashable, Sendable {
        let id: UInt64
    }

    /// Why a stored waiter is being removed.
    enum Removal: Sendable {
        case cancelled, expired
    }

    /// What `remove` did: the continuation it took out of the state (resumed then with the error of the removal), and
    /// work to do once the lock is released.
    struct Removed<Value: Sendable> {
        var continuation: CheckedContinuation<Value, any Error>?
        var then: (@Sendable () -> Void)?

        static var nothing: Removed { Removed(continuation: nil, then: nil) }
    }

    private static let tickets = NIOLockedValueBox<UInt64>(0)

    /// The thread deadlines fire on: one of its own, so that no server's or client's work on the shared event loops (an
    /// origin rendering images, a burst of connections) delays a deadline. It lives as long as the process.
    private static let timers = MultiThreadedEventLoopGroup(numberOfThreads: 1).next()

    /// Where one wait stands: not stored yet, stored, or ended before it was stored.
    private enum Phase {
        case unregistered, registered
        case endedEarly(Removal)
    }

    /// Waits until the owner resumes the continuation `register` stored, the task is cancelled (`CancellationError`) or
    /// `deadline` passes (`expired()`), whichever comes first.
    ///
    /// - Parameters:
    ///   - register: under the owner's lock: store the continuation under the ticket, or resume it; return work to do
    ///     after the lock (start an operation), or nil.
    ///   - remove: under the owner's lock, after a cancellation or the deadline: take the ticket's continuation out
    ///     of the state if it is still there (see `Removed`).
    static func wait<State: Sendable, Value: Sendable>(
        in box: NIOLockedValueBox<State>,
        until deadline: ContinuousClock.Instant? = nil,
        expired: @escaping @Sendable () -> any Error = { CancellationError() },
        register: (inout State, Ticket, CheckedContinuation<Value, any Error>) -> (@Sendable () -> Void)?,
        remove: @escaping @Sendable (inout State, Ticket, Removal) -> Removed<Value>
    ) async throws -> Value {
        let ticket = Ticket(id: tickets.withLockedValue { $0 += 1; return $0 })
        let phase = NIOLockedValueBox(Phase.unregistered)
        /// Ends the wait for `reason`: removes the stored waiter, or marks the wait to end when it registers.
        @Sendable func end(_ reason: Removal) {
            let removed: Removed<Value> = box.withLockedValue { state in
                let stored = phase.withLockedValue { phase -> Bool in
                    guard case .unregistered = phase else { return true }
                    phase = .endedEarly(reason)
                    return false
                }
                return stored ? remove(&state, ticket, reason) : .nothing
            }
            removed.continuation?.resume(throwing: reason == .cancelled ? CancellationError() : expired())
            removed.then?()
        }
        let timer = deadline.map { deadline in
            timers.scheduleTask(in: .nanoseconds(max(0, ContinuousClock.now.duration(to: deadline).nanoseconds))) { end(.expired) }
        }
        defer { timer?.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let (endedEarly, then): (Removal?, (@Sendable () -> Void)?) = box.withLockedValue { state in
                    let early = phase.withLockedValue { phase -> Removal? in
                        if case .endedEarly(let reason) = phase { return reason }
                        phase = .registered
                        return nil
                    }
                    if let early { return (early, nil) }
                    return (nil, register(&state, ticket, continuation))
                }
                if let endedEarly { continuation.resume(throwing: endedEarly == .cancelled ? CancellationError() : expired()) }
                then?()
            }
        } onCancel: {
            end(.cancelled)
        }
    }
}

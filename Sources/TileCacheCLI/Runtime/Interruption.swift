import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C (SIGINT) and SIGTERM during a long command: the first stops it cleanly, a second ends the process at once.
///
/// The first signal cancels the work: it stops admitting new items, transfers in flight are cancelled, and what
/// completed comes back for a partial report. A second signal exits immediately with 128 + its number.
enum Interruption {
    /// The exit code after `signal`, by the shell's convention: 130 for SIGINT, 143 for SIGTERM.
    static func exitCode(for signal: Int32) -> Int32 { 128 + signal }

    /// Runs `work`, watching for SIGINT and SIGTERM; returns its result and the signal that interrupted it, if any.
    ///
    /// Structured: the work and the signal watcher are children of one task group, which ends when the work does.
    /// The work runs in a group of its own with a child that waits for the first signal, as ServiceLifecycle's
    /// `cancelWhenGracefulShutdown` does, so the first signal cancels the work alone while the watcher goes on waiting
    /// for a second.
    ///
    /// - Parameter onInterrupt: called once, at the first signal (to say that the command is stopping).
    static func run<T: Sendable>(onInterrupt: @escaping @Sendable (Int32) -> Void = { _ in },
                                 _ work: @escaping @Sendable () async -> T) async -> (result: T, signal: Int32?) {
        let signals = SignalWaiter(signals: [SIGINT, SIGTERM])
        await signals.ready()
        let received = NIOLockedValueBox<Int32?>(nil)
        let (stopping, stop) = AsyncStream.makeStream(of: Void.self)
        let result = await withTaskGroup(of: T?.self) { group in
            group.addTask {
                await withTaskGroup(of: T?.self) { scope in
                    scope.addTask { await work() }
                    scope.addTask {
                        for await _ in stopping { break }  // the first signal, or nil once the work has ended
                        return nil
                    }
                    var result: T?
                    while let next = await scope.next() {
                        if let value = next { result = value }
                        scope.cancelAll()  // the work ended: stop waiting; or the first signal: stop the work
                    }
                    return result
                }
            }
            group.addTask {
                guard let first = await signals.next() else { return nil }  // nil: cancelled, the work has ended
                received.withLockedValue { $0 = first }
                stop.finish()
                onInterrupt(first)
                guard let second = await signals.next() else { return nil }
                let message: StaticString = "\ninterrupted again: exiting now, without a report\n"
                _ = write(STDERR_FILENO, message.utf8Start, message.utf8CodeUnitCount)
                _exit(exitCode(for: second))
            }
            var result: T?
            for await next in group {
                guard let value = next else { continue }
                result = value
                group.cancelAll()  // the work ended: the watcher stops
            }
            return result!  // the work's child always returns a value
        }
        return (result, received.withLockedValue { $0 })
    }
}

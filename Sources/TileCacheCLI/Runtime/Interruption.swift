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
    /// - Parameter onInterrupt: called once, at the first signal (to say that the command is stopping).
    static func run<T: Sendable>(onInterrupt: @escaping @Sendable (Int32) -> Void = { _ in },
                                 _ work: @escaping @Sendable () async -> T) async -> (result: T, signal: Int32?) {
        let signals = SignalWaiter(signals: [SIGINT, SIGTERM])
        let received = NIOLockedValueBox<Int32?>(nil)
        let task = Task { await work() }
        let watcher = Task {
            guard let first = await signals.next() else { return }
            received.withLockedValue { $0 = first }
            task.cancel()
            onInterrupt(first)
            guard let second = await signals.next() else { return }
            let message = "\ninterrupted again: exiting now, without a report\n"
            _ = message.withCString { write(STDERR_FILENO, $0, strlen($0)) }
            _exit(exitCode(for: second))
        }
        let result = await task.value
        watcher.cancel()
        _ = await watcher.value
        return (result, received.withLockedValue { $0 })
    }
}

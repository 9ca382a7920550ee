/// The one place work that blocks a thread (file I/O, SHA-256, decoding, resizing) is run from async code.
///
/// It runs the work inline, on the calling task. Moving it to a thread pool for blocking work (`NIOThreadPool`, the
/// singleton or a pool of its own) made the test suite hang in about one run in four (issue 15's notes: every thread
/// idle, a graceful-shutdown test and one long test never finishing), so that move waits until the cause is found.
/// Every call site goes through here, so the move is this one function.
public enum BlockingWork {
    /// The result of `body`, run on the calling task; a body that cannot fail makes a call that cannot fail.
    ///
    /// - Throws: `body`'s error.
    public static func run<T: Sendable, Failure: Error>(_ body: @escaping @Sendable () throws(Failure) -> T) async throws(Failure) -> T {
        try body()
    }
}

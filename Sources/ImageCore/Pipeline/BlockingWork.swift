import NIOCore
import NIOPosix

/// Work that blocks a thread (file I/O, SHA-256, decoding, resizing) runs here: on a thread pool of its own for
/// blocking work (`NIOThreadPool`, one thread per core), never on Swift's cooperative threads, which must stay free to
/// run tasks.
public enum BlockingWork {
    /// The pool, started on first use and kept for the life of the process.
    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: max(2, System.coreCount))
        pool.start()
        return pool
    }()

    /// The result of `body`, run on the blocking pool; the calling task suspends meanwhile.
    ///
    /// - Throws: `body`'s error; `.cancelled` naming `subject` when the pool has been shut down (at process exit).
    public static func run<T: Sendable>(_ subject: String, _ body: @escaping @Sendable () throws(ImageCoreError) -> T) async throws(ImageCoreError) -> T {
        do {
            return try await pool.runIfActive { () throws -> T in try body() }
        } catch let error as ImageCoreError {
            throw error
        } catch {
            throw ImageCoreError(.cancelled, subject: subject, message: "the thread pool for blocking work is not running: \(error)")
        }
    }
}

import NIOPosix

/// Work that blocks a thread (file I/O, SHA-256, decoding, resizing) runs here: on NIO's shared thread pool for
/// blocking work (`NIOThreadPool.singleton`, the pool NIOFileSystem uses), never on Swift's cooperative threads, which
/// must stay free to run tasks.
public enum BlockingWork {
    /// The result of `body`, run on the blocking pool; the calling task suspends meanwhile.
    ///
    /// - Throws: `body`'s error; `.cancelled` naming `subject` when the pool has been shut down (at process exit).
    public static func run<T: Sendable>(_ subject: String, _ body: @escaping @Sendable () throws(ImageCoreError) -> T) async throws(ImageCoreError) -> T {
        do {
            return try await NIOThreadPool.singleton.runIfActive { () throws -> T in try body() }
        } catch let error as ImageCoreError {
            throw error
        } catch {
            throw ImageCoreError(.cancelled, subject: subject, message: "the thread pool for blocking work is not running: \(error)")
        }
    }
}

import Foundation
public import Logging
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// Appends the URL of every image the service is asked for to a file, one a line: the access trace
/// `tilecache bench-cache --trace FILE` replays.
///
/// Each line is one `write(2)` to a file opened with `O_APPEND`, so lines never interleave, even with another
/// process appending. Thread-safety: `record` may be called from any task.
public final class TraceRecorder: Sendable {
    /// The file.
    public let path: String
    private let descriptor: Int32
    private let failed = NIOLockedValueBox(false)
    private let logger: Logger

    /// Opens (creating if needed) `path` for appending.
    ///
    /// - Throws: `TraceRecorderError` naming the file and the reason when it cannot be opened.
    public init(path: String, logger: Logger) throws(TraceRecorderError) {
        self.path = path
        self.logger = logger
        descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw TraceRecorderError(message: "--record-trace: cannot open \(path) for appending: \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(descriptor) }

    /// Appends `url` and a newline. A failed write (disk full) is logged once and recording goes on: the trace is a
    /// by-product, never a reason to fail a request.
    public func record(_ url: String) {
        let line = Array((url + "\n").utf8)
        let written = line.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        if written != line.count {
            let reason = String(cString: strerror(errno))
            let first = failed.withLockedValue { failed in defer { failed = true }; return !failed }
            if first { logger.warning("cannot append to the trace file \(path): \(reason); later failures are not logged") }
        }
    }
}

/// A trace file that cannot be opened.
public struct TraceRecorderError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

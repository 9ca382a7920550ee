import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// Where a command writes: reports to `out` (stdout), progress and logs to `err` (stderr).
///
/// Commands read `Console.current`, a task-local, so tests run them in-process and capture both streams.
public struct Console: Sendable {
    /// Writes report text (stdout).
    public var out: @Sendable (String) -> Void
    /// Writes progress, warnings and logs (stderr).
    public var err: @Sendable (String) -> Void
    /// Whether stdout is a terminal.
    public var outIsTerminal: Bool
    /// Whether stderr is a terminal (live progress is drawn only there; questions are asked only there).
    public var errIsTerminal: Bool
    /// Reads a line of the user's answer (stdin).
    public var readLine: @Sendable () -> String? = { Swift.readLine() }

    /// The process's stdout and stderr.
    public static let standard = Console(
        out: { text in FileHandle.standardOutput.write(Data(text.utf8)) },
        err: { text in FileHandle.standardError.write(Data(text.utf8)) },
        outIsTerminal: isatty(STDOUT_FILENO) == 1, errIsTerminal: isatty(STDERR_FILENO) == 1)

    /// The console commands write to.
    @TaskLocal public static var current = Console.standard

    /// A console that keeps everything written, for tests.
    public static func capturing() -> (Console, CapturedOutput) {
        let captured = CapturedOutput()
        let console = Console(out: { captured.appendOut($0) }, err: { captured.appendErr($0) },
                              outIsTerminal: false, errIsTerminal: false)
        return (console, captured)
    }
}

/// Text a capturing console received.
public final class CapturedOutput: Sendable {
    private let buffers = NIOLockedValueBox<(out: String, err: String)>(("", ""))

    /// Everything written to stdout.
    public var out: String { buffers.withLockedValue { $0.out } }
    /// Everything written to stderr.
    public var err: String { buffers.withLockedValue { $0.err } }

    func appendOut(_ text: String) { buffers.withLockedValue { $0.out += text } }
    func appendErr(_ text: String) { buffers.withLockedValue { $0.err += text } }
}

import Foundation
import ImageCore
import NIOConcurrencyHelpers
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The real `tilecache` binary run as a child process: for what needs a process of its own (signals, environment
/// variables, exit codes as the shell sees them).
///
/// Started by `spawnProcess` (default disposition and an empty mask for every signal); its stdout and stderr go to
/// files, read once it has exited.
final class ChildProcess: Sendable {
    /// The `tilecache` executable SwiftPM built beside this test bundle.
    static var binary: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("tilecache").path
    }

    private let pid: pid_t
    /// The child's process ID.
    var processID: pid_t { pid }
    private let arguments: [String]
    private let directory: String
    private let output = NIOLockedValueBox<(out: String, err: String)>(("", ""))

    /// Starts `tilecache arguments...`, with `environment` added to this process's; with `wrapper`, as its last
    /// arguments (`strace -c -o FILE tilecache ...`).
    init(_ arguments: [String], environment: [String: String] = [:], directory workingDirectory: String? = nil,
         wrappedIn wrapper: [String] = []) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw TestFailure("no tilecache binary at \(Self.binary): build it first (swift build --product tilecache)")
        }
        self.arguments = arguments
        directory = try makeTemporaryDirectory()

        // In another working directory, through the shell: glibc's posix_spawn_file_actions_addchdir_np is not
        // visible to Swift.
        let command = workingDirectory.map { ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", $0, Self.binary] } ?? [Self.binary]
        let pid = try spawnProcess(wrapper + command + arguments, environment: environment, stdout: directory + "/out",
                                   stderr: directory + "/err")
        self.pid = pid
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// Waits until what it has written to stdout so far contains `text`; returns that output.
    ///
    /// - Throws: `TestFailure` with its stderr when it exits first or `timeout` passes.
    func waitForOutput(containing text: String, timeout: Duration = TestTime.scaled(.seconds(30))) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let out = String(decoding: (try? LocalFile.read(directory + "/out")) ?? [], as: UTF8.self)
            if out.contains(text) { return out }
            guard kill(pid, 0) == 0 else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let err = String(decoding: (try? LocalFile.read(directory + "/err")) ?? [], as: UTF8.self)
        throw TestFailure("tilecache \(arguments) wrote no '\(text)': \(err)")
    }

    /// Sends `signal` to the process.
    func send(_ signal: Int32) { kill(pid, signal) }

    /// Waits for the exit, up to `timeout`; returns the exit code (128 + the signal when a signal ended it).
    func wait(timeout: Duration = TestTime.scaled(.seconds(60))) async throws -> Int32 {
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            guard ContinuousClock.now < deadline else {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                throw TestFailure("tilecache \(arguments) did not exit within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let out = (try? LocalFile.read(directory + "/out")) ?? [], err = (try? LocalFile.read(directory + "/err")) ?? []
        output.withLockedValue { $0 = (String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self)) }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// What it wrote to stdout (once it has exited).
    var out: String { output.withLockedValue { $0.out } }
    /// What it wrote to stderr (once it has exited).
    var err: String { output.withLockedValue { $0.err } }

    /// Runs `tilecache arguments...` to the end: exit code, stdout, stderr.
    static func run(_ arguments: [String], environment: [String: String] = [:], directory: String? = nil,
                    wrappedIn wrapper: [String] = []) async throws -> (code: Int32, out: String, err: String) {
        let child = try ChildProcess(arguments, environment: environment, directory: directory, wrappedIn: wrapper)
        let code = try await child.wait()
        return (code, child.out, child.err)
    }
}


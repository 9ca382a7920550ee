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
/// Started with `posix_spawn` (Foundation's `Process` leaks itself on Linux, as does `readabilityHandler`), with the
/// default disposition and an empty mask for every signal, whatever this process was doing with them; its stdout and
/// stderr go to files, read once it has exited.
final class ChildProcess: Sendable {
    /// The `tilecache` executable SwiftPM built beside this test bundle.
    static var binary: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("tilecache").path
    }

    private let pid: pid_t
    private let arguments: [String]
    private let directory: String
    private let output = NIOLockedValueBox<(out: String, err: String)>(("", ""))

    /// Starts `tilecache arguments...`, with `environment` added to this process's.
    init(_ arguments: [String], environment: [String: String] = [:], directory workingDirectory: String? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw TestFailure("no tilecache binary at \(Self.binary): build it first (swift build --product tilecache)")
        }
        self.arguments = arguments
        directory = try makeTemporaryDirectory()

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, directory + "/out", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, directory + "/err", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t(), none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }
        // In another working directory, through the shell: glibc's posix_spawn_file_actions_addchdir_np is not
        // visible to Swift.
        let command = workingDirectory.map { ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", $0, Self.binary] } ?? [Self.binary]
        let argv = (command + arguments).map { strdup($0) } + [nil]
        let envp = variables.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, command[0], &actions, &attributes, argv, envp)
        guard status == 0 else { throw TestFailure("posix_spawn \(command[0]): \(String(cString: strerror(status)))") }
        self.pid = pid
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

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
    static func run(_ arguments: [String], environment: [String: String] = [:], directory: String? = nil) async throws
        -> (code: Int32, out: String, err: String) {
        let child = try ChildProcess(arguments, environment: environment, directory: directory)
        let code = try await child.wait()
        return (code, child.out, child.err)
    }
}


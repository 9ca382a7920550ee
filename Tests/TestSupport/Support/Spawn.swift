import CSpawn
public import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
public import Glibc
#endif

/// Starts `arguments[0]` with `arguments` as its argv, this process's environment plus `environment`, stdin from
/// /dev/null and stdout and stderr into the files `stdout` and `stderr`; returns its pid.
///
/// `posix_spawn`, because Foundation's `Process` leaks itself on Linux. The child gets the default disposition and an
/// empty mask for every signal, whatever this process was doing with them: a test runner's threads block most
/// signals, and a child that inherited that mask would ignore the SIGTERM that stops it.
///
/// The child gets no other file descriptor of this process. SwiftNIO accepts connections without `SOCK_CLOEXEC`, so
/// every child started while a test's server had a connection open kept that socket open: the server's close sent
/// no FIN until the child exited, and clients waited for bodies cut off on purpose until their timeouts (a truncated
/// or reset origin answer reported as `timeout`, an idle connection closed 11 s late).
public func spawnProcess(_ arguments: [String], environment: [String: String] = [:], stdout: String,
                         stderr: String) throws -> Glibc.pid_t {
    func check(_ status: Int32, _ call: String) throws {
        guard status == 0 else { throw TestFailure("\(call) for \(arguments[0]): \(String(cString: strerror(status)))") }
    }
    var actions = posix_spawn_file_actions_t()
    try check(posix_spawn_file_actions_init(&actions), "posix_spawn_file_actions_init")
    defer { posix_spawn_file_actions_destroy(&actions) }
    try check(posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0), "posix_spawn_file_actions_addopen")
    try check(posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644), "posix_spawn_file_actions_addopen")
    try check(posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644), "posix_spawn_file_actions_addopen")
    try check(tc_spawn_file_actions_addclosefrom(&actions, 3), "posix_spawn_file_actions_addclosefrom_np")
    var attributes = posix_spawnattr_t()
    try check(posix_spawnattr_init(&attributes), "posix_spawnattr_init")
    defer { posix_spawnattr_destroy(&attributes) }
    var all = sigset_t(), none = sigset_t()
    sigfillset(&all)
    sigemptyset(&none)
    try check(posix_spawnattr_setsigdefault(&attributes, &all), "posix_spawnattr_setsigdefault")
    try check(posix_spawnattr_setsigmask(&attributes, &none), "posix_spawnattr_setsigmask")
    try check(posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)), "posix_spawnattr_setflags")

    let variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }.map { "\($0.key)=\($0.value)" }
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = variables.map { strdup($0) } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var pid: pid_t = 0
    let status = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
    guard status == 0 else { throw TestFailure("posix_spawn \(arguments[0]): \(String(cString: strerror(status)))") }
    return pid
}

/// Runs `arguments` (as `spawnProcess` does) to its end, polling with `Task.sleep` so no thread of the cooperative
/// pool blocks on it; a process still running after `timeout` (scaled) is killed and the test fails.
///
/// - Throws: `TestFailure` naming `description` with the process's stderr when it exits non-zero or runs too long.
public func runProcess(_ arguments: [String], environment: [String: String] = [:], description: String,
                       within timeout: Duration = .seconds(120)) async throws {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let pid = try spawnProcess(arguments, environment: environment, stdout: directory + "/out", stderr: directory + "/err")
    var status: Int32 = 0
    let deadline = ContinuousClock.now + TestTime.scaled(timeout)
    while waitpid(pid, &status, WNOHANG) == 0 {
        guard ContinuousClock.now < deadline else {
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
            throw TestFailure("\(description) still running after \(TestTime.scaled(timeout)); killed")
        }
        try await Task.sleep(for: .milliseconds(20))
    }
    guard status == 0 else {
        throw TestFailure("\(description) failed: \((try? String(contentsOfFile: directory + "/err", encoding: .utf8)) ?? "")")
    }
}

/// A value made once per test process, by the first caller, and awaited by every caller after it (a shared server,
/// images rendered beforehand). A failure is kept too: every caller sees it.
public final class OncePerProcess<Value: Sendable>: Sendable {
    private let task = NIOLockedValueBox<Task<Value, any Error>?>(nil)

    public init() {}

    public func value(_ make: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let started = task.withLockedValue { task in
            if let task { return task }
            let started = Task { try await make() }
            task = started
            return started
        }
        return try await started.value
    }
}

/// Runs the Python client `Tests/Clients/NAME` (a peer no code of ours is in: sockets, hmac, email.utils, sqlite3)
/// with `arguments`, as `runProcess` does.
///
/// - Throws: `TestFailure` naming the client with its stderr when it exits non-zero or runs too long.
public func runPythonClient(_ name: String, _ arguments: [String]) async throws {
    try await runProcess(["/usr/bin/env", "python3", ScriptServer.packageRoot + "/Tests/Clients/" + name] + arguments,
                         description: "Tests/Clients/\(name) \(arguments.joined(separator: " ").prefix(200))")
}

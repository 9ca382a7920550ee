import Foundation
import ImageCore
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// A server run by one of the project's scripts (`scripts/seaweedfs.sh`, `scripts/postgres.sh`), which prints
/// `ready PORT` once it answers and stops the server on SIGTERM, or when this test process exits.
public final class ScriptServer: Sendable {
    /// The port it printed.
    public let port: Int
    /// Its temporary directory (data and logs), removed by `stop()`.
    public let directory: String
    private let pid: pid_t
    private let stopped = NIOLockedValueBox(false)

    /// A server someone else started (`scripts/with-test-servers.sh`): `stop()` leaves it alone.
    public init(runningOn port: Int) {
        self.port = port
        directory = ""
        pid = 0
        stopped.withLockedValue { $0 = true }
    }

    private init(port: Int, directory: String, pid: pid_t) {
        self.port = port
        self.directory = directory
        self.pid = pid
    }

    /// Runs `scripts/NAME` with `arguments(directory)` (a fresh temporary directory) and waits up to 60 s for its
    /// `ready PORT` line.
    public static func start(_ name: String, environment: [String: String] = [:],
                             arguments: (_ directory: String) -> [String]) async throws -> ScriptServer {
        let script = packageRoot + "/scripts/" + name
        let directory = try makeTemporaryDirectory()
        let pid = try spawnProcess(["/bin/bash", script] + arguments(directory), environment: environment,
                                   stdout: directory + "/out", stderr: directory + "/err")
        let deadline = ContinuousClock.now + TestTime.scaled(.seconds(60))
        while ContinuousClock.now < deadline {
            // LocalFile, not String(contentsOfFile:): Foundation leaks a buffer per read of an empty file (LeakSanitizer).
            let out = String(decoding: (try? LocalFile.read(directory + "/out")) ?? [], as: UTF8.self)
            if let line = out.split(separator: "\n").first(where: { $0.hasPrefix("ready ") }), let port = Int(line.dropFirst(6)) {
                return ScriptServer(port: port, directory: directory, pid: pid)
            }
            var exit: Int32 = 0
            if waitpid(pid, &exit, WNOHANG) == pid {
                let err = String(decoding: (try? LocalFile.read(directory + "/err")) ?? [], as: UTF8.self)
                throw TestFailure("\(name) did not start (run scripts/install-fleet-deps.sh first?): \(err)")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        kill(pid, SIGTERM)
        throw TestFailure("\(name) was not ready within 60 s")
    }

    /// Runs `scripts/NAME arguments` to its end (e.g. `postgres.sh stop DIR`).
    ///
    /// - Throws: `TestFailure` with its stderr when it exits non-zero.
    public static func run(_ name: String, _ arguments: [String]) async throws {
        try await runProcess(["/bin/bash", packageRoot + "/scripts/" + name] + arguments,
                             description: "scripts/\(name) \(arguments.joined(separator: " "))")
    }

    /// Stops it (the script stops its server) and waits until it has exited; at most 10 s, then SIGKILL. Polls with
    /// `Task.sleep`: blocking a thread of the cooperative pool (2 on this machine) for the seconds weed takes to stop
    /// starved every other test in the process (truncated bodies then ran into their timeouts).
    public func stop() async {
        let already = stopped.withLockedValue { (done: inout Bool) -> Bool in
            defer { done = true }
            return done
        }
        guard !already else { return }
        kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<200 where waitpid(pid, &status, WNOHANG) == 0 { try? await Task.sleep(for: .milliseconds(50)) }
        if kill(pid, 0) == 0 {
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The package's root folder (this file is Tests/TestSupport/Support/ScriptServer.swift).
    public static let packageRoot: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
}

import Foundation
public import ImageCore
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// A real SeaweedFS (S3 gateway included) on loopback, started by `scripts/seaweedfs.sh` (which `make test` has
/// installed through `scripts/install-fleet-deps.sh`); stopped by `stop()`, or when this test process exits.
public final class SeaweedFS: Sendable {
    /// The credentials of the store's one identity.
    public static let accessKeyID = "tilecache-test"
    public static let secretAccessKey = "tilecache-test-secret"

    /// `http://127.0.0.1:PORT`.
    public let endpoint: String
    /// The S3 port.
    public let port: Int
    private let pid: pid_t
    private let directory: String
    private let stopped = NIOLockedValueBox(false)

    /// The environment a `SharedStoreConfiguration` (or a `tilecache` child) reads: endpoint, region, credentials.
    public var environment: [String: String] {
        [SharedStoreConfiguration.Variable.endpoint: endpoint, SharedStoreConfiguration.Variable.region: "us-east-1",
         SharedStoreConfiguration.Variable.accessKeyID: Self.accessKeyID,
         SharedStoreConfiguration.Variable.secretAccessKey: Self.secretAccessKey]
    }

    /// The store configuration of `s3://BUCKET/PREFIX` here, with a short probe interval for tests.
    public func store(_ storeURL: String) throws -> SharedStoreConfiguration {
        var configuration = try SharedStoreConfiguration(storeURL: storeURL, endpoint: nil, environment: environment)
        configuration.probeInterval = .milliseconds(500)
        return configuration
    }

    /// The one instance this test process shares (each test uses its own bucket or prefix), started on first use.
    public static func shared() async throws -> SeaweedFS {
        let task = sharedStart.withLockedValue { task in
            if let task { return task }
            let started = Task { try await SeaweedFS.start() }
            task = started
            return started
        }
        return try await task.value
    }

    private static let sharedStart = NIOLockedValueBox<Task<SeaweedFS, any Error>?>(nil)

    private init(endpoint: String, port: Int, pid: pid_t, directory: String) {
        self.endpoint = endpoint
        self.port = port
        self.pid = pid
        self.directory = directory
    }

    /// Starts one on `port` (0: free ports), waiting until its S3 API answers.
    public static func start(port: Int = 0) async throws -> SeaweedFS {
        let script = packageRoot + "/scripts/seaweedfs.sh"
        let directory = try makeTemporaryDirectory()
        let pid = try spawnProcess(["/bin/bash", script, directory + "/store", String(port), String(getpid())],
                                   environment: [SharedStoreConfiguration.Variable.accessKeyID: accessKeyID,
                                                 SharedStoreConfiguration.Variable.secretAccessKey: secretAccessKey],
                                   stdout: directory + "/out", stderr: directory + "/err")
        let deadline = ContinuousClock.now + TestTime.scaled(.seconds(60))
        while ContinuousClock.now < deadline {
            let out = (try? String(contentsOfFile: directory + "/out", encoding: .utf8)) ?? ""
            if let line = out.split(separator: "\n").first(where: { $0.hasPrefix("ready ") }), let port = Int(line.dropFirst(6)) {
                return SeaweedFS(endpoint: "http://127.0.0.1:\(port)", port: port, pid: pid, directory: directory)
            }
            var exit: Int32 = 0
            if waitpid(pid, &exit, WNOHANG) == pid {
                let err = (try? String(contentsOfFile: directory + "/err", encoding: .utf8)) ?? ""
                throw TestFailure("SeaweedFS did not start (run scripts/install-fleet-deps.sh first?): \(err)")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        kill(pid, SIGTERM)
        throw TestFailure("SeaweedFS was not ready within 60 s")
    }

    /// Stops it (and waits until it has exited).
    public func stop() {
        let already = stopped.withLockedValue { (done: inout Bool) -> Bool in
            defer { done = true }
            return done
        }
        guard !already else { return }
        kill(pid, SIGTERM)
        // The script stops weed within 2.5 s; past 10 s something is wrong, and a test must not hang on it.
        var status: Int32 = 0
        for _ in 0..<200 where waitpid(pid, &status, WNOHANG) == 0 { usleep(50_000) }
        if kill(pid, 0) == 0 {
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The package's root folder (this file is Tests/TestSupport/Support/SeaweedFS.swift).
    public static let packageRoot: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
}

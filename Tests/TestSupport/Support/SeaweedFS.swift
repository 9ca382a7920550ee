import Foundation
import ImageCore
public import SharedStore

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
    public var port: Int { server.port }
    private let server: ScriptServer

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
        try await sharedServer.value {
            // `make test` starts one before the suite (scripts/with-test-servers.sh), off the suite's busiest seconds.
            if let port = ProcessInfo.processInfo.environment["TILECACHE_TEST_S3_PORT"].flatMap(Int.init) {
                return SeaweedFS(server: ScriptServer(runningOn: port))
            }
            return try await SeaweedFS.start()
        }
    }

    private static let sharedServer = OncePerProcess<SeaweedFS>()

    private init(server: ScriptServer) {
        self.server = server
        endpoint = "http://127.0.0.1:\(server.port)"
    }

    /// Starts one on `port` (0: free ports), waiting until its S3 API answers.
    public static func start(port: Int = 0) async throws -> SeaweedFS {
        let server = try await ScriptServer.start("seaweedfs.sh", environment: [
            SharedStoreConfiguration.Variable.accessKeyID: accessKeyID, SharedStoreConfiguration.Variable.secretAccessKey: secretAccessKey,
        ]) { directory in [directory + "/store", String(port), String(getpid())] }
        return SeaweedFS(server: server)
    }

    /// Stops it (and waits until it has exited).
    public func stop() async { await server.stop() }
}

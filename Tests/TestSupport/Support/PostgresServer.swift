import Foundation
public import TileCacheService

#if canImport(Glibc)
import Glibc
#endif

/// A real PostgreSQL (Debian's, installed by `scripts/install-fleet-deps.sh`) on a loopback port in a temporary data
/// directory, started by `scripts/postgres.sh` (initdb + pg_ctl); stopped by `stop()`, or when this test process exits.
public final class PostgresServer: Sendable {
    public static let user = "tilecache"
    public static let password = "tilecache-test-password"

    private let server: ScriptServer
    public var port: Int { server.port }

    private init(server: ScriptServer) { self.server = server }

    /// The one server this test process shares (each test uses its own database), started on first use.
    public static func shared() async throws -> PostgresServer {
        try await sharedServer.value {
            // `make test` starts one before the suite (scripts/with-test-servers.sh), off the suite's busiest seconds.
            if let port = ProcessInfo.processInfo.environment["TILECACHE_TEST_POSTGRES_PORT"].flatMap(Int.init) {
                return PostgresServer(server: ScriptServer(runningOn: port))
            }
            return try await PostgresServer.start()
        }
    }

    private static let sharedServer = OncePerProcess<PostgresServer>()

    /// Starts a server of its own (for a test that stops and restarts it).
    public static func start() async throws -> PostgresServer {
        let server = try await ScriptServer.start("postgres.sh", environment: ["PGPASSWORD": password]) { directory in
            ["run", directory, "0", String(getpid())]
        }
        return PostgresServer(server: server)
    }

    /// `postgres://tilecache:…@127.0.0.1:PORT/DATABASE`.
    public func url(database: String = "tilecache") -> String {
        "postgres://\(Self.user):\(Self.password)@127.0.0.1:\(port)/\(database)?sslmode=disable"
    }

    /// A new, empty database for one test; its URL.
    public func freshDatabase() async throws -> String {
        let name = "t_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        try await psql("CREATE DATABASE \(name)")
        return url(database: name)
    }

    /// Runs one SQL command in the `tilecache` database through `psql`.
    public func psql(_ command: String) async throws {
        try await runProcess(["/usr/bin/psql", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(port), "-U", Self.user,
                              "-d", "tilecache", "-c", command],
                             environment: ["PGPASSWORD": Self.password], description: "psql \(command)")
    }

    /// Kills the server at once (`pg_ctl stop -m immediate`: what a crash does); `restart()` brings it back.
    public func crash() async throws { try await ScriptServer.run("postgres.sh", ["stop", server.directory]) }

    /// Starts it again on the same port and data directory.
    public func restart() async throws { try await ScriptServer.run("postgres.sh", ["start", server.directory]) }

    public func stop() async { await server.stop() }

    /// The database of `url` as the service's configuration names it.
    public static func database(_ url: String) throws -> FavoritesDatabase { try FavoritesDatabase(url) }
}

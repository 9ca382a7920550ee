import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import ImageCore
import Logging
import NIOCore
import Testing
import TestSupport
import TileCacheService

/// Favourites on a real PostgreSQL (Debian's, in a temporary data directory): what only a server database has — a
/// fleet sharing one, the server going away and coming back, and what goes wrong at start.
@Suite("Favourites on PostgreSQL", .timeLimit(.minutes(5)), .heavy)
struct PostgresFavoritesTests {
    func post(_ client: any TestClientProtocol, _ json: String) async throws -> TestResponse {
        try await client.execute(uri: "/api/v1/favorites", method: .post, headers: [.contentType: "application/json"],
                                 body: ByteBuffer(string: json))
    }

    @Test("two instances on one database see each other's favourites; ids are never reused")
    func sharedByInstances() async throws {
        let harness = try await ServiceHarness.start(favorites: .postgres)
        try await withService(harness) { first, _ in
            let created = try await post(first, #"{"favoritedBy":"Ada","elementName":"Sodium","elementSymbol":"Na"}"#)
            #expect(created.status == .created)
            #expect(try created.decoded(as: ServiceJSON.Favorite.self).id == "1")
            var other = harness.configuration
            other.pipeline.diskDirectory = harness.directory + "/other-cache"
            let dependencies = try ServiceDependencies(configuration: other, logger: Logger(label: "test"))
            try await dependencies.prepare()  // a second migration of the same schema is a no-op
            try await buildApplication(dependencies, logger: Logger(label: "test")).test(.ahc(.http)) { second in
                let seen = try await second.execute(uri: "/api/v1/favorites", method: .get).decoded(as: [ServiceJSON.Favorite].self)
                #expect(seen.map(\.elementSymbol) == ["Na"])
                #expect(try await second.execute(uri: "/api/v1/favorites/1", method: .delete).status == .ok)
                let next = try await post(second, #"{"favoritedBy":"Ada","number":26}"#)
                #expect(try next.decoded(as: ServiceJSON.Favorite.self).id == "2", "id 1 was deleted: never handed out again")
            }
            await dependencies.close()
            #expect(try await first.execute(uri: "/api/v1/favorites", method: .get).decoded(as: [ServiceJSON.Favorite].self).map(\.id) == ["2"])
        }
    }

    @Test("the server dies: requests get 503 with Retry-After and /healthz says so; it comes back: the pool reconnects; no 201 is lost")
    func connectionLoss() async throws {
        let server = try await PostgresServer.start()
        let harness = try await ServiceHarness.start { configuration in
            configuration.database = try! FavoritesDatabase(server.url())
            configuration.databaseCallTimeout = .seconds(3)  // the service's: an outage must answer 503 promptly
        }
        try await withService(harness) { client, _ in
            // Writers post without pause through the outage; every 201 must be in the database at the end.
            let acknowledged = Locked<[String]>([])
            let statuses = Locked<[Int: Int]>([:])
            let stop = Locked(false)
            let writers = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<4 {
                        group.addTask {
                            var sequence = 0
                            while !stop.value {
                                sequence += 1
                                let response = try await post(client, #"{"favoritedBy":"w\#(writer)","number":\#(1 + sequence % 100)}"#)
                                statuses.withLock { $0[Int(response.status.code), default: 0] += 1 }
                                if response.status == .created {
                                    let id = try response.decoded(as: ServiceJSON.Favorite.self).id
                                    acknowledged.withLock { $0.append(id) }
                                } else if response.status == .serviceUnavailable {
                                    #expect(response.headers[.retryAfter] == "1" && response.errorReason == "database")
                                    try await Task.sleep(for: .milliseconds(50))
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            try await waitUntil("writes acknowledged before the crash") { acknowledged.withLock { $0.count } >= 8 }
            try await server.crash()
            // While it is down: 503 with Retry-After, and /healthz is 503 naming the database.
            try await waitUntil("a 503 while the database is down", within: .seconds(20)) {
                statuses.withLock { ($0[503] ?? 0) > 0 }
            }
            let health = try await client.execute(uri: "/healthz", method: .get)
            #expect(health.status == .serviceUnavailable)
            #expect(try health.decoded(as: ServiceJSON.Health.self).checks["database"] == "failing")
            try await server.restart()
            // Back: a post succeeds again within the deadline, without restarting the service.
            let before = acknowledged.withLock { $0.count }
            var notResumed: (any Error)?
            do {
                try await waitUntil("writes resumed after the restart", within: .seconds(30)) {
                    acknowledged.withLock { $0.count } > before + 8
                }
            } catch { notResumed = error }
            stop.withLock { $0 = true }
            try await writers.value
            #expect(notResumed == nil, "\(notResumed.map { "\($0)" } ?? ""): \(statuses.withLock { $0 })")
            #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
            var stored: Set<String> = []
            for page in 1... {  // 100 a page
                let ids = try await client.execute(uri: "/api/v1/favorites?page=\(page)", method: .get).decoded(as: [ServiceJSON.Favorite].self).map(\.id)
                stored.formUnion(ids)
                if ids.count < 100 { break }
            }
            let lost = Set(acknowledged.withLock { $0 }).subtracting(stored)
            #expect(lost.isEmpty, "acknowledged with 201 but not stored: \(lost.sorted())")
            #expect(statuses.withLock { Set($0.keys) }.isSubset(of: [201, 503]), "\(statuses.withLock { $0 })")
        }
        await server.stop()
    }

    @Test("after the server restarts, the first call succeeds: an idle connection the server closed is not used")
    func idleConnectionsAfterRestart() async throws {
        let server = try await PostgresServer.start()
        guard case .postgres(let location) = try FavoritesDatabase(server.url()) else { Issue.record("not PostgreSQL"); return }
        let repository = PostgresFavorites(location: location, logger: Logger(label: "test"))
        try await repository.prepare()
        // Four connections made and left idle in the pool.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask { _ = try await repository.add(favoritedBy: "w\(writer)", elementNumber: 1, body: "{}") }
            }
            try await group.waitForAll()
        }
        try await server.crash()
        try await server.restart()
        for writer in 0..<4 {
            #expect(try await repository.list(favoritedBy: "w\(writer)", after: 0, limit: 10).count == 1)
        }
        #expect(await repository.isHealthy())
        await server.stop()
    }

    @Test("at start: a wrong password, a missing database, a port with no server and a malformed URL are errors naming the masked URL")
    func startErrors() async throws {
        let server = try await PostgresServer.shared()
        let logger = Logger(label: "test")
        func failure(_ url: String) async throws -> String {
            guard case .postgres(let location) = try FavoritesDatabase(url) else { return "not PostgreSQL" }
            let repository = PostgresFavorites(location: location, logger: logger, startPatience: .seconds(1))
            do throws(FavoritesStoreError) {
                try await repository.prepare()
                return "no error"
            } catch {
                return error.description
            }
        }
        let wrong = try await failure("postgres://tilecache:not-the-password@127.0.0.1:\(server.port)/tilecache?sslmode=disable")
        #expect(wrong.contains("postgres://tilecache:***@127.0.0.1:\(server.port)/tilecache") && wrong.contains("password authentication failed"), "\(wrong)")
        #expect(!wrong.contains("not-the-password"))
        let missing = try await failure("postgres://tilecache:\(PostgresServer.password)@127.0.0.1:\(server.port)/nosuchdb?sslmode=disable")
        #expect(missing.contains(#"database "nosuchdb" does not exist"#), "\(missing)")
        // The test server has no TLS: the modes that require it refuse to go on in plain text (libpq's own check).
        for mode in ["require", "verify-ca", "verify-full"] {
            let plain = try await failure("postgres://tilecache:\(PostgresServer.password)@127.0.0.1:\(server.port)/tilecache?sslmode=\(mode)")
            #expect(plain.contains("server does not support SSL"), "\(mode): \(plain)")
        }
        let nobody = try await failure("postgres://tilecache:secret@127.0.0.1:9/tilecache?sslmode=disable")
        #expect(nobody.contains("postgres://tilecache:***@127.0.0.1:9/tilecache") && !nobody.contains("secret"), "\(nobody)")
        for (url, reason) in [("postgres://tilecache:pw@/db", "no host"), ("postgres://127.0.0.1/db", "no user name"),
                              ("postgres://u:pw@127.0.0.1:5432", "no database name"), ("postgres://u:pw@h/db?sslmode=allow", "sslmode must be"),
                              ("postgres://u:pw@h/db?application_name=x", "unsupported parameter")] {
            #expect(throws: FavoritesStoreError.self) { try FavoritesDatabase(url) }
            do {
                _ = try FavoritesDatabase(url)
            } catch {
                #expect(error.description.contains(reason) && !error.description.contains(":pw@"), "\(url): \(error)")
            }
        }
    }
}

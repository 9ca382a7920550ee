import Foundation
import ImageCore
import Testing
import TestSupport

/// `serve --db` / `TILECACHE_DATABASE_URL` as a user runs them: real processes against a real PostgreSQL.
@Suite("tilecache serve with PostgreSQL favourites", .timeLimit(.minutes(5)), .heavy)
struct ServeDatabaseTests {
    @Test("a wrong password from --db or TILECACHE_DATABASE_URL stops serve at start, naming the masked URL; a blank variable is a usage error")
    func startErrors() async throws {
        let server = try await PostgresServer.shared()
        try await withTemporaryDirectory { directory in
            let url = "postgres://tilecache:not-the-password@127.0.0.1:\(server.port)/tilecache?sslmode=disable"
            let serve = ["serve", "--port", "0", "--cache-dir", directory + "/cache"]
            for run in [try await ChildProcess.run(serve + ["--db", url]),
                        try await ChildProcess.run(serve, environment: ["TILECACHE_DATABASE_URL": url])] {
                #expect(run.code == 1 && run.out.isEmpty)
                #expect(run.err.contains("cannot open the favourites database postgres://tilecache:***@127.0.0.1:\(server.port)/tilecache"), "\(run.err)")
                #expect(run.err.contains("password authentication failed") && !run.err.contains("not-the-password"), "\(run.err)")
            }
            let blank = try await ChildProcess.run(serve, environment: ["TILECACHE_DATABASE_URL": " "])
            #expect(blank.code == 1 && blank.err.contains("TILECACHE_DATABASE_URL is set but empty"), "\(blank.err)")
            let malformed = try await ChildProcess.run(serve + ["--db", "postgres://u:secret@127.0.0.1/"])
            #expect(malformed.code == 1 && malformed.err.contains("no database name") && !malformed.err.contains("secret"), "\(malformed.err)")
        }
    }

    @Test("serve with a good URL starts, says where favourites are (password masked), and its /healthz reaches the database")
    func serves() async throws {
        let server = try await PostgresServer.shared()
        let url = try await server.freshDatabase()
        try await withTemporaryDirectory { directory in
            let child = try ChildProcess(["serve", "--port", "0", "--cache-dir", directory + "/cache"], environment: ["TILECACHE_DATABASE_URL": url])
            let out = try await child.waitForOutput(containing: "serving on http://127.0.0.1:")
            #expect(out.contains("(favourites in postgres://tilecache:***@127.0.0.1:\(server.port)/"), "\(out)")
            let port = try #require(out.split(separator: ":").dropFirst(2).first.flatMap { Int($0.prefix { $0.isNumber }) })
            // The first call opens the pool's first connection (a debug build's SCRAM handshake, on a busy machine, can
            // outlast the 3 s a call waits): ask again until a deadline.
            var checks: [String: String]?
            let deadline = ContinuousClock.now + TestTime.scaled(.seconds(20))
            repeat {
                let health = try await TransferEngine().perform(TransferRequest(url: "http://127.0.0.1:\(port)/healthz"))
                checks = try decode(ServiceJSON.Health.self, from: health.body).checks
            } while checks?["database"] != "ok" && ContinuousClock.now < deadline
            #expect(checks?["database"] == "ok")
            child.send(SIGTERM)
            #expect(try await child.wait() == 0)
        }
    }
}

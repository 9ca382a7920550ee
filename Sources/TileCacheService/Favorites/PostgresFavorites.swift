import Foundation
import ImageCore
public import Logging
import ServiceLifecycle

/// Favourites in PostgreSQL, shared by every instance of a fleet, through libpq (PostgreSQL's own client library,
/// Debian's libpq5): a pool of up to 8 connections that connects again after an outage (`LibPQPool`).
///
/// A call that writes returns only once its transaction has committed (`written`). While the server cannot be reached,
/// a call fails after `callDeadline` (the service answers 503 with Retry-After) instead of waiting for the pool, and
/// works again as soon as a connection can be made.
public final class PostgresFavorites: FavoritesRepository {
    public let location: String
    private let pool: LibPQPool
    private let logger: Logger
    /// How long a call waits for a connection and its answer.
    let callDeadline: Duration
    /// How long `prepare()` retries a server that refuses connections.
    let startPatience: Duration

    /// A repository on `location`; nothing is sent until `prepare()` or the first call.
    public init(location: PostgresLocation, logger: Logger, callDeadline: Duration = .seconds(3),
                startPatience: Duration = .seconds(10)) {
        self.location = location.description
        self.logger = logger
        self.callDeadline = callDeadline
        self.startPatience = startPatience
        // libpq's connection keywords: the URL's parts, `sslmode` as libpq reads it, a 2-second connect timeout, and TCP
        // keepalives and a user timeout so that a call on a server gone silent (no reset) fails within seconds.
        let parameters: [(keyword: String, value: String)] = [
            ("host", location.host), ("port", String(location.port)), ("user", location.username),
            ("dbname", location.database), ("sslmode", location.tls.rawValue), ("connect_timeout", "2"),
            ("application_name", "tilecache"), ("client_encoding", "UTF8"),
            ("keepalives", "1"), ("keepalives_idle", "5"), ("keepalives_interval", "2"), ("keepalives_count", "3"),
            ("tcp_user_timeout", "10000"),
        ] + (location.password.map { [("password", $0)] } ?? [])
            // The roots a certificate is checked against: libpq's default is ~/.postgresql/root.crt, which a service
            // seldom has; the system's, as a browser or curl would use, unless PGSSLROOTCERT names others.
            + ([.verifyCA, .verifyFull].contains(location.tls) && ProcessInfo.processInfo.environment["PGSSLROOTCERT"] == nil
                ? [("sslrootcert", "/etc/ssl/certs/ca-certificates.crt")] : [])
        pool = LibPQPool(parameters: parameters, limit: 8)
    }

    /// Waits for the service group's graceful shutdown (after the HTTP server has drained) or cancellation, then closes
    /// the idle connections.
    public func run() async throws {
        try? await gracefulShutdown()
        pool.closeIdle()
    }

    /// Connects (retrying for up to `startPatience` while the server refuses connections: it may be starting) and
    /// creates or migrates the schema, under an advisory lock so that instances starting together do it once.
    ///
    /// - Throws: `FavoritesStoreError` naming the masked URL and PostgreSQL's reason (wrong password, no such
    ///   database, not reachable).
    public func prepare() async throws(FavoritesStoreError) {
        let deadline = ContinuousClock.now + startPatience
        while true {
            do {
                try await pool.withConnection { connection in try Self.migrate(connection) }
                return
            } catch let error as LibPQError {
                if error.sqlState != nil {
                    throw FavoritesStoreError(location: location, message: "could not create the schema: \(error.message)")
                }
                // Refused or timed out: the server may be starting. Anything the server said (password, database) is final.
                guard !error.isServerAnswer, ContinuousClock.now < deadline else {
                    throw FavoritesStoreError(location: location, message: error.message)
                }
                logger.info("PostgreSQL not reachable yet; retrying", metadata: ["database": "\(location)", "reason": "\(error.message)"])
                try? await Task.sleep(for: .milliseconds(500))
            } catch {
                throw FavoritesStoreError(location: location, message: "\(error)")
            }
        }
    }

    /// Schema version 1: the same columns as SQLite's `favorite` table. `GENERATED ALWAYS AS IDENTITY` never hands out
    /// an id twice, deleted ones included, like SQLite's AUTOINCREMENT.
    private static func migrate(_ connection: LibPQConnection) throws(LibPQError) {
        try transaction(connection) { connection throws(LibPQError) in
            try connection.execute("SELECT pg_advisory_xact_lock(7401016)")
            try connection.execute("CREATE TABLE IF NOT EXISTS tilecache_schema (version integer NOT NULL)")
            let version = (try connection.execute("SELECT max(version) FROM tilecache_schema").first?.first ?? nil).flatMap { Int($0) } ?? 0
            if version < 1 {
                try connection.execute("""
                    CREATE TABLE favorite (
                        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                        favorited_by text NOT NULL,
                        element_number integer NOT NULL,
                        body text NOT NULL,
                        created_at text NOT NULL)
                    """)
                try connection.execute("CREATE INDEX favorite_favorited_by ON favorite (favorited_by)")
                try connection.execute("INSERT INTO tilecache_schema (version) VALUES (1)")
            }
        }
    }

    // MARK: - Calls

    public func add(favoritedBy: String, elementNumber: Int, body: String) async throws -> Favorite {
        let createdAt = Favorite.now()
        // The quota checked in the INSERT itself: no row when it would be passed (concurrent writes of one person
        // may each see the others' rows missing, so it can be passed by at most the writes in flight).
        let rows = try await written("""
            INSERT INTO favorite (favorited_by, element_number, body, created_at)
            SELECT $1::text, $2::integer, $3::text, $4::text
            WHERE (SELECT count(*) < $5::bigint AND coalesce(sum(octet_length(body)), 0) + octet_length($3::text) <= $6::bigint
                   FROM favorite WHERE favorited_by = $1::text)
            RETURNING \(Self.columns)
            """, [favoritedBy, String(elementNumber), body, createdAt, String(FavoritesQuota.count), String(FavoritesQuota.bytes)])
        guard let favorite = rows.first else { throw FavoritesQuotaExceeded(favoritedBy: favoritedBy) }
        return favorite
    }

    public func favorite(id: Int64) async throws -> Favorite? {
        try await rows("SELECT \(Self.columns) FROM favorite WHERE id = $1::bigint", [String(id)]).first
    }

    public func replace(id: Int64, favoritedBy: String, elementNumber: Int, body: String) async throws -> Favorite? {
        let rows = try await written("""
            UPDATE favorite SET favorited_by = $2::text, element_number = $3::integer, body = $4::text
            WHERE id = $1::bigint
              AND (SELECT count(*) < $5::bigint AND coalesce(sum(octet_length(body)), 0) + octet_length($4::text) <= $6::bigint
                   FROM favorite WHERE favorited_by = $2::text AND id <> $1::bigint)
            RETURNING \(Self.columns)
            """, [String(id), favoritedBy, String(elementNumber), body, String(FavoritesQuota.count), String(FavoritesQuota.bytes)])
        if let replaced = rows.first { return replaced }
        // No row: no such favourite, or the quota.
        guard try await favorite(id: id) != nil else { return nil }
        throw FavoritesQuotaExceeded(favoritedBy: favoritedBy)
    }

    public func remove(id: Int64) async throws -> Favorite? {
        try await written("DELETE FROM favorite WHERE id = $1::bigint RETURNING \(Self.columns)", [String(id)]).first
    }

    public func list(favoritedBy: String?, after: Int64, limit: Int) async throws -> [Favorite] {
        if let favoritedBy {
            return try await rows("""
                SELECT \(Self.columns) FROM favorite WHERE favorited_by = $1::text AND id > $2::bigint ORDER BY id LIMIT $3::bigint
                """, [favoritedBy, String(after), String(limit)])
        }
        return try await rows("SELECT \(Self.columns) FROM favorite WHERE id > $1::bigint ORDER BY id LIMIT $2::bigint",
                              [String(after), String(limit)])
    }

    public func page(favoritedBy: String?, offset: Int, limit: Int) async throws -> (favorites: [Favorite], total: Int) {
        let (select, count, parameters): (String, String, [String?]) = if let favoritedBy {
            ("SELECT \(Self.columns) FROM favorite WHERE favorited_by = $1::text ORDER BY id LIMIT $2::bigint OFFSET $3::bigint",
             "SELECT count(*) FROM favorite WHERE favorited_by = $1::text", [favoritedBy, String(limit), String(offset)])
        } else {
            ("SELECT \(Self.columns) FROM favorite ORDER BY id LIMIT $1::bigint OFFSET $2::bigint", "SELECT count(*) FROM favorite",
             [String(limit), String(offset)])
        }
        let favorites = try await rows(select, parameters)
        let total = try await call { connection in
            try Self.integer(connection.execute(count, favoritedBy == nil ? [] : [favoritedBy]), "count(*)")
        }
        return (favorites, total)
    }

    public func isHealthy() async -> Bool {
        (try? await call { connection in try Self.integer(connection.execute("SELECT 1"), "SELECT 1") }) == 1
    }

    private static let columns = "id, favorited_by, element_number, body, created_at"

    /// Runs `query` and decodes its rows as favourites, within `callDeadline`.
    private func rows(_ query: String, _ parameters: [String?]) async throws -> [Favorite] {
        try await call { connection in try Self.favorites(in: connection.execute(query, parameters)) }
    }

    /// Runs `query`, a statement that writes, in a transaction of its own, and decodes the rows it returns, within
    /// `callDeadline`; returns once PostgreSQL has answered the `COMMIT`. The statement alone is not enough: its rows
    /// come before its implicit transaction commits, and a server stopped in between (`pg_ctl stop -m immediate`, a
    /// crash) may still have sent them (PostgresNIO, which this repository used before libpq, ended the rows there, and
    /// the service answered 201 for a favourite that was never stored: the outage test, about one run in six). A
    /// `COMMIT` is answered only once it has committed (and, with `synchronous_commit` on, PostgreSQL's default, once
    /// its WAL is flushed).
    private func written(_ query: String, _ parameters: [String?]) async throws -> [Favorite] {
        let rows = try await call { connection in
            try Self.transaction(connection) { connection throws(LibPQError) in try connection.execute(query, parameters) }
        }
        return try Self.favorites(in: rows)
    }

    /// `body` between BEGIN and COMMIT on `connection`; a failure rolls back (when the connection still answers).
    private static func transaction<T>(_ connection: LibPQConnection, _ body: (LibPQConnection) throws(LibPQError) -> T) throws(LibPQError) -> T {
        try connection.execute("BEGIN")
        let result: T
        do {
            result = try body(connection)
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
        try connection.execute("COMMIT")
        return result
    }

    /// `work` on a pooled connection, or `PostgresFavoritesError` after `callDeadline`, whichever comes first. The
    /// caller stops waiting then; the work finishes on its thread (a statement in flight on a connection whose server
    /// went silent ends with libpq's TCP timeouts), and the pool keeps its bound of connections meanwhile.
    private func call<T: Sendable>(_ work: @escaping @Sendable (LibPQConnection) throws -> T) async throws -> T {
        let deadline = callDeadline
        return try await Deadline.first(of: { [pool] in try await pool.withConnection(work) },
                                        orThrow: { PostgresFavoritesError("no answer from PostgreSQL within \(deadline)") },
                                        at: .now + deadline)
    }

    /// The rows of a statement that returns `columns`, as favourites.
    private static func favorites(in rows: [[String?]]) throws -> [Favorite] {
        try rows.map { row throws in try favorite(row) }
    }

    private static func favorite(_ row: [String?]) throws -> Favorite {
        guard row.count == 5, let id = row[0].flatMap({ Int64($0) }), let favoritedBy = row[1],
              let elementNumber = row[2].flatMap({ Int($0) }), let body = row[3], let createdAt = row[4] else {
            throw PostgresFavoritesError("PostgreSQL returned a favourite row that is not (id, favorited_by, element_number, body, created_at)")
        }
        return Favorite(id: id, favoritedBy: favoritedBy, elementNumber: elementNumber, body: body, createdAt: createdAt)
    }

    /// The one integer a statement such as `SELECT count(*)` returns.
    private static func integer(_ rows: [[String?]], _ what: String) throws -> Int {
        guard let text = rows.first?.first ?? nil, let value = Int(text) else {
            throw PostgresFavoritesError("PostgreSQL's answer to \(what) is not an integer")
        }
        return value
    }
}

/// A favourites call that PostgreSQL did not answer in time, or answered unexpectedly.
struct PostgresFavoritesError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

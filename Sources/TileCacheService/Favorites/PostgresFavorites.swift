import Foundation
import ImageCore
public import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// Favourites in PostgreSQL, shared by every instance of a fleet (PostgresNIO's `PostgresClient`: a pool that
/// reconnects on its own).
///
/// A call that writes returns only once its transaction has committed (`written`). While the server cannot be reached,
/// a call fails after `callDeadline` (the service answers 503 with Retry-After) instead of waiting for the pool, and
/// works again as soon as the pool has reconnected.
public final class PostgresFavorites: FavoritesRepository {
    public let location: String
    private let connection: PostgresConnection.Configuration
    private let client: PostgresClient
    private let logger: Logger
    /// How long a call waits for a connection and its answer.
    let callDeadline: Duration
    /// How long `prepare()` retries a server that refuses connections.
    let startPatience: Duration

    /// A repository on `location`; nothing is sent until `prepare()` or the first call.
    ///
    /// - Throws: `FavoritesStoreError` when TLS (`sslmode=prefer` or `require`) cannot be set up.
    public init(location: PostgresLocation, logger: Logger, callDeadline: Duration = .seconds(3),
                startPatience: Duration = .seconds(10)) throws(FavoritesStoreError) {
        self.location = location.description
        self.logger = logger
        self.callDeadline = callDeadline
        self.startPatience = startPatience
        let clientTLS: PostgresClient.Configuration.TLS, connectionTLS: PostgresConnection.Configuration.TLS
        do {
            switch location.tls {
            case .disable:
                (clientTLS, connectionTLS) = (.disable, .disable)
            case .prefer:
                let context = try NIOSSLContext(configuration: .makeClientConfiguration())
                (clientTLS, connectionTLS) = (.prefer(.makeClientConfiguration()), .prefer(context))
            case .require:
                let context = try NIOSSLContext(configuration: .makeClientConfiguration())
                (clientTLS, connectionTLS) = (.require(.makeClientConfiguration()), .require(context))
            }
        } catch {
            throw FavoritesStoreError(location: location.description, message: "cannot set up TLS (sslmode=\(location.tls.rawValue)): \(error)")
        }
        connection = PostgresConnection.Configuration(host: location.host, port: location.port, username: location.username,
                                                      password: location.password, database: location.database, tls: connectionTLS)
        var configuration = PostgresClient.Configuration(host: location.host, port: location.port, username: location.username,
                                                         password: location.password, database: location.database, tls: clientTLS)
        configuration.options.connectTimeout = .seconds(2)
        configuration.options.maximumConnections = 16
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
    }

    /// Runs the connection pool until the service group shuts down gracefully (after the HTTP server has drained) or
    /// the task is cancelled: `PostgresClient.run()`, as a service.
    public func run() async throws {
        await client.run()
    }

    /// Connects (retrying for up to `startPatience` while the server refuses connections: it may be starting) and
    /// creates or migrates the schema, under an advisory lock so that instances starting together do it once.
    ///
    /// - Throws: `FavoritesStoreError` naming the masked URL and PostgreSQL's reason (wrong password, no such
    ///   database, not reachable).
    public func prepare() async throws(FavoritesStoreError) {
        let deadline = ContinuousClock.now + startPatience
        var attempt = 0
        while true {
            attempt += 1
            do {
                let connection = try await PostgresConnection.connect(configuration: self.connection, id: attempt, logger: logger)
                do {
                    try await Self.migrate(connection, logger: logger)
                    try? await connection.close()
                    return
                } catch {
                    try? await connection.close()
                    throw FavoritesStoreError(location: location, message: "could not create the schema: \(Self.message(error))")
                }
            } catch let error as FavoritesStoreError {
                throw error
            } catch {
                // Refused or timed out: the server may be starting. Anything the server said (password, database) is final.
                let message = Self.message(error)
                guard !Self.isServerAnswer(error), ContinuousClock.now < deadline else {
                    throw FavoritesStoreError(location: location, message: message)
                }
                logger.info("PostgreSQL not reachable yet; retrying", metadata: ["database": "\(location)", "reason": "\(message)"])
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    /// Schema version 1: the same columns as SQLite's `favorite` table. `GENERATED ALWAYS AS IDENTITY` never hands out
    /// an id twice, deleted ones included, like SQLite's AUTOINCREMENT.
    private static func migrate(_ connection: PostgresConnection, logger: Logger) async throws {
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(7401016)", logger: logger)
            try await connection.query("CREATE TABLE IF NOT EXISTS tilecache_schema (version integer NOT NULL)", logger: logger)
            var version = 0
            for try await (value) in try await connection.query("SELECT max(version) FROM tilecache_schema", logger: logger).decode(Int?.self) {
                version = value ?? 0
            }
            if version < 1 {
                try await connection.query("""
                    CREATE TABLE favorite (
                        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                        favorited_by text NOT NULL,
                        element_number integer NOT NULL,
                        body text NOT NULL,
                        created_at text NOT NULL)
                    """, logger: logger)
                try await connection.query("CREATE INDEX favorite_favorited_by ON favorite (favorited_by)", logger: logger)
                try await connection.query("INSERT INTO tilecache_schema (version) VALUES (1)", logger: logger)
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
            SELECT \(favoritedBy), \(elementNumber), \(body), \(createdAt)
            WHERE (SELECT count(*) < \(FavoritesQuota.count) AND coalesce(sum(octet_length(body)), 0) + octet_length(\(body)) <= \(FavoritesQuota.bytes)
                   FROM favorite WHERE favorited_by = \(favoritedBy))
            RETURNING \(unescaped: Self.columns)
            """)
        guard let favorite = rows.first else { throw FavoritesQuotaExceeded(favoritedBy: favoritedBy) }
        return favorite
    }

    public func favorite(id: Int64) async throws -> Favorite? {
        try await rows("SELECT \(unescaped: Self.columns) FROM favorite WHERE id = \(id)").first
    }

    public func replace(id: Int64, favoritedBy: String, elementNumber: Int, body: String) async throws -> Favorite? {
        let rows = try await written("""
            UPDATE favorite SET favorited_by = \(favoritedBy), element_number = \(elementNumber), body = \(body)
            WHERE id = \(id)
              AND (SELECT count(*) < \(FavoritesQuota.count) AND coalesce(sum(octet_length(body)), 0) + octet_length(\(body)) <= \(FavoritesQuota.bytes)
                   FROM favorite WHERE favorited_by = \(favoritedBy) AND id <> \(id))
            RETURNING \(unescaped: Self.columns)
            """)
        if let replaced = rows.first { return replaced }
        // No row: no such favourite, or the quota.
        guard try await favorite(id: id) != nil else { return nil }
        throw FavoritesQuotaExceeded(favoritedBy: favoritedBy)
    }

    public func remove(id: Int64) async throws -> Favorite? {
        try await written("DELETE FROM favorite WHERE id = \(id) RETURNING \(unescaped: Self.columns)").first
    }

    public func list(favoritedBy: String?, after: Int64, limit: Int) async throws -> [Favorite] {
        if let favoritedBy {
            return try await rows("""
                SELECT \(unescaped: Self.columns) FROM favorite WHERE favorited_by = \(favoritedBy) AND id > \(after)
                ORDER BY id LIMIT \(limit)
                """)
        }
        return try await rows("SELECT \(unescaped: Self.columns) FROM favorite WHERE id > \(after) ORDER BY id LIMIT \(limit)")
    }

    public func page(favoritedBy: String?, offset: Int, limit: Int) async throws -> (favorites: [Favorite], total: Int) {
        let (select, count): (PostgresQuery, PostgresQuery) = if let favoritedBy {
            ("SELECT \(unescaped: Self.columns) FROM favorite WHERE favorited_by = \(favoritedBy) ORDER BY id LIMIT \(limit) OFFSET \(offset)",
             "SELECT count(*) FROM favorite WHERE favorited_by = \(favoritedBy)")
        } else {
            ("SELECT \(unescaped: Self.columns) FROM favorite ORDER BY id LIMIT \(limit) OFFSET \(offset)", "SELECT count(*) FROM favorite")
        }
        let favorites = try await rows(select)
        let total = try await withDeadline { [client, logger] in
            var total = 0
            for try await value in try await client.query(count, logger: logger).decode(Int.self) { total = value }
            return total
        }
        return (favorites, total)
    }

    public func isHealthy() async -> Bool {
        (try? await withDeadline { [client, logger] in
            var answer = 0
            for try await value in try await client.query("SELECT 1", logger: logger).decode(Int.self) { answer = value }
            return answer
        }) == 1
    }

    private static let columns = "id, favorited_by, element_number, body, created_at"

    /// Runs `query` and decodes its rows as favourites, within `callDeadline`.
    private func rows(_ query: PostgresQuery) async throws -> [Favorite] {
        try await withDeadline { [client, logger] in try await Self.favorites(in: client.query(query, logger: logger)) }
    }

    /// Runs `query`, a statement that writes, in a transaction of its own, and decodes the rows it returns, within
    /// `callDeadline`; returns once PostgreSQL has answered the `COMMIT`. A statement alone is not enough: in the
    /// extended query protocol its rows and CommandComplete come before its implicit transaction commits (at Sync),
    /// and a server stopped in between (`pg_ctl stop -m immediate`, a crash) evidently still sends them (most likely
    /// flushed with the notice it sends the client as it quits). PostgresNIO ends the rows at CommandComplete, so the
    /// service answered 201 for a favourite that was never stored (the outage test, about one run in six). A `COMMIT`
    /// is answered only once it has committed (and, with `synchronous_commit` on, PostgreSQL's default, once its WAL is
    /// flushed).
    private func written(_ query: PostgresQuery) async throws -> [Favorite] {
        try await withDeadline { [client, logger] in
            do {
                return try await client.withTransaction(logger: logger) { connection in
                    try await Self.favorites(in: connection.query(query, logger: logger))
                }
            } catch let error as PostgresTransactionError {
                throw error.closureError ?? error.commitError ?? error.beginError ?? error
            }
        }
    }

    /// The rows of a statement that returns `columns`, as favourites.
    private static func favorites(in rows: PostgresRowSequence) async throws -> [Favorite] {
        var favorites: [Favorite] = []
        for try await (id, favoritedBy, elementNumber, body, createdAt) in rows.decode((Int64, String, Int, String, String).self) {
            favorites.append(Favorite(id: id, favoritedBy: favoritedBy, elementNumber: elementNumber, body: body, createdAt: createdAt))
        }
        return favorites
    }

    /// `work`, or `PostgresFavoritesError` after `callDeadline`, whichever comes first. The work is cancelled then (a
    /// connection lease still waiting is withdrawn) but not waited for: a query in flight on a connection whose server
    /// died may not answer cancellation, and a task group would wait for it, so the bound would not hold.
    private func withDeadline<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        let deadline = callDeadline
        return try await Deadline.first(of: work, orThrow: { PostgresFavoritesError("no answer from PostgreSQL within \(deadline)") },
                                        at: .now + deadline)
    }

    // MARK: - Errors

    /// PostgreSQL's own message when it sent one (wrong password, no such database), else the connection's error.
    static func message(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return message(underlying) }
            return "\(error.code)"
        }
        if let connection = error as? NIOConnectionError {
            // Each address tried, with the system's reason: "127.0.0.1:5432: Connection refused".
            if connection.connectionErrors.isEmpty, let resolution = connection.dnsAError ?? connection.dnsAAAAError {
                return "cannot resolve \(connection.host): \(message(resolution))"  // "Name or service not known"
            }
            let failures = connection.connectionErrors.map { failure in
                "\(URLAuthority.string(host: failure.target.ipAddress ?? connection.host, port: failure.target.port ?? connection.port)): \(message(failure.error))"
            }
            return failures.isEmpty ? "cannot connect to \(URLAuthority.string(host: connection.host, port: connection.port))" : failures.joined(separator: "; ")
        }
        if let system = error as? IOError { return String(cString: strerror(system.errnoCode)) }
        if let unknown = error as? SocketAddressError.UnknownHost { return unknown.errorDescription }
        return "\(error)"
    }

    /// Whether the server answered (with an error): then retrying will not help.
    static func isServerAnswer(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo != nil
    }
}

/// A favourites call that PostgreSQL did not answer in time, or answered unexpectedly.
struct PostgresFavoritesError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

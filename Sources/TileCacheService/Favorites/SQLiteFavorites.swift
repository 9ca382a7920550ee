public import Catalogue
import Foundation
import GRDB
import ImageCore
import ServiceLifecycle

/// Favourites in SQLite (GRDB, WAL journal): user data beside the cache, never removed by `tilecache clear`. The
/// embedded default: one machine needs nothing else.
///
/// Every write is a transaction, so a crash loses at most the write in flight and never corrupts the file.
/// Thread-safety: a `DatabasePool` serialises writes and allows concurrent reads; call from any task.
public final class SQLiteFavorites: FavoritesRepository {
    private let database: DatabasePool
    public let location: String

    /// Opens (creating and migrating as needed) the database at `path`.
    ///
    /// - Parameter catalogue: names the elements of favourites stored before the v2 schema (three keys only).
    /// - Throws: `FavoritesStoreError` naming the path and the reason when it cannot be created, opened or migrated.
    public init(path: String, catalogue: ElementCatalogue = .standard) throws(FavoritesStoreError) {
        location = path
        do {
            database = try Self.open(path, catalogue: catalogue)
        } catch {
            throw FavoritesStoreError(location: path, reason: error)
        }
    }

    private static func open(_ path: String, catalogue: ElementCatalogue) throws -> DatabasePool {
        let directory = LocalDirectory.parent(of: path)
        if !directory.isEmpty { try LocalDirectory.create(directory) }
        let database = try DatabasePool(path: path)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: "favorite") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("favoritedBy", .text).notNull().indexed()
                table.column("elementName", .text).notNull()
                table.column("elementSymbol", .text).notNull()
                table.column("createdAt", .text).notNull()
            }
        }
        // v2 keeps whatever object was posted (both README generations' bodies), as the seed's mock API did. Rows of
        // v1 keep their ids and times; their body is the three keys they were posted with, plus the element's name,
        // symbol and number (as every v2 record has).
        migrator.registerMigration("v2") { db in
            try db.create(table: "favorite_v2") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("favoritedBy", .text).notNull().indexed()
                table.column("elementNumber", .integer).notNull()
                table.column("body", .text).notNull()
                table.column("createdAt", .text).notNull()
            }
            let rows = try Row.fetchAll(db, sql: "SELECT id, favoritedBy, elementName, elementSymbol, createdAt FROM favorite")
            for row in rows {
                let name: String = row["elementName"], symbol: String = row["elementSymbol"]
                let element = catalogue.element(matching: name) ?? catalogue.element(matching: symbol)
                var body: [String: JSONValue] = ["favoritedBy": .string(row["favoritedBy"]), "elementName": .string(name),
                                                 "elementSymbol": .string(symbol)]
                if let element {
                    body["name"] = .string(element.name)
                    body["symbol"] = .string(element.symbol)
                    body["number"] = .integer(Int64(element.number))
                }
                let text = String(decoding: try FavoriteBody.encoder.encode(body), as: UTF8.self)
                try db.execute(sql: "INSERT INTO favorite_v2 (id, favoritedBy, elementNumber, body, createdAt) VALUES (?, ?, ?, ?, ?)",
                               arguments: [row["id"], row["favoritedBy"], element?.number ?? 0, text, row["createdAt"]])
            }
            // Ids are never handed out again, also those of favourites deleted before the migration: a client holding
            // a stale id must not reach someone else's favourite. Dropping the old table drops its counter; carry it.
            let issued = try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'favorite'") ?? 0
            try db.drop(table: "favorite")
            try db.rename(table: "favorite_v2", to: "favorite")
            try db.execute(sql: "DELETE FROM sqlite_sequence WHERE name = 'favorite'")
            let highest = try Int64.fetchOne(db, sql: "SELECT MAX(id) FROM favorite") ?? 0
            try db.execute(sql: "INSERT INTO sqlite_sequence (name, seq) VALUES ('favorite', ?)", arguments: [max(issued, highest)])
        }
        try migrator.migrate(database)
        return database
    }

    /// Nothing to do: the file was opened and migrated by `init`.
    public func prepare() async throws(FavoritesStoreError) {}

    /// Nothing runs beside the calls (GRDB's pool is used from the calling tasks and closed when released): waits for
    /// the service group's graceful shutdown, or cancellation.
    public func run() async throws {
        try? await gracefulShutdown()
    }

    // Every call is GRDB's async access: SQLite runs on GRDB's own dispatch queues while the calling task suspends,
    // never blocking one of Swift's cooperative threads.

    /// Stores a new favourite and returns it with its id.
    public func add(favoritedBy: String, elementNumber: Int, body: String) async throws -> Favorite {
        let createdAt = Favorite.now()
        return try await database.write { db in
            try Self.checkQuota(db, favoritedBy: favoritedBy, adding: body, replacing: nil)
            var favorite = Favorite(favoritedBy: favoritedBy, elementNumber: elementNumber, body: body, createdAt: createdAt)
            try favorite.insert(db)
            return favorite
        }
    }

    /// The favourite with this id, or nil.
    public func favorite(id: Int64) async throws -> Favorite? {
        try await database.read { db in try Favorite.fetchOne(db, key: id) }
    }

    /// Replaces the body of favourite `id`, keeping its id and creation time; nil when there is no such favourite.
    public func replace(id: Int64, favoritedBy: String, elementNumber: Int, body: String) async throws -> Favorite? {
        try await database.write { db in
            guard var favorite = try Favorite.fetchOne(db, key: id) else { return nil }
            try Self.checkQuota(db, favoritedBy: favoritedBy, adding: body, replacing: id)
            favorite.favoritedBy = favoritedBy
            favorite.elementNumber = elementNumber
            favorite.body = body
            try favorite.update(db)
            return favorite
        }
    }

    /// Removes favourite `id` and returns it; nil when there is no such favourite.
    public func remove(id: Int64) async throws -> Favorite? {
        try await database.write { db in
            guard let favorite = try Favorite.fetchOne(db, key: id) else { return nil }
            try favorite.delete(db)
            return favorite
        }
    }

    /// Up to `limit` favourites with ids above `after`, oldest first, of one person when `favoritedBy` is given.
    public func list(favoritedBy: String?, after: Int64, limit: Int) async throws -> [Favorite] {
        try await database.read { db in
            var request = Favorite.filter(Column("id") > after).order(Column("id"))
            if let favoritedBy { request = request.filter(Column("favoritedBy") == favoritedBy) }
            return try request.limit(limit).fetchAll(db)
        }
    }

    /// One page of `list`, by the primary key's order, and the count of all.
    public func page(favoritedBy: String?, offset: Int, limit: Int) async throws -> (favorites: [Favorite], total: Int) {
        try await database.read { db in
            var request = Favorite.order(Column("id"))
            if let favoritedBy { request = request.filter(Column("favoritedBy") == favoritedBy) }
            return (try request.limit(limit, offset: offset).fetchAll(db), try request.fetchCount(db))
        }
    }

    /// Throws `FavoritesQuotaExceeded` when storing `body` for `favoritedBy` (instead of favourite `replacing`)
    /// would pass `FavoritesQuota`; runs inside the write's transaction, so no other write comes between.
    private static func checkQuota(_ db: Database, favoritedBy: String, adding body: String, replacing id: Int64?) throws {
        let row = try Row.fetchOne(db, sql: """
            SELECT count(*) AS count, coalesce(sum(length(CAST(body AS BLOB))), 0) AS bytes
            FROM favorite WHERE favoritedBy = ? AND id IS NOT ?
            """, arguments: [favoritedBy, id])
        let (count, bytes): (Int, Int) = (row?["count"] ?? 0, row?["bytes"] ?? 0)
        if count + 1 > FavoritesQuota.count || bytes + body.utf8.count > FavoritesQuota.bytes {
            throw FavoritesQuotaExceeded(favoritedBy: favoritedBy)
        }
    }

    /// Whether the database answers a query (for /healthz).
    public func isHealthy() async -> Bool {
        (try? await database.read { db in try Int.fetchOne(db, sql: "SELECT 1") }) == 1
    }
}


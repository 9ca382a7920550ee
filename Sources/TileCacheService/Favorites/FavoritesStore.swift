import Foundation
import GRDB
import ImageCore

/// A favourite element, as the seed's favourites API stores it.
public struct Favorite: Sendable, Codable, Equatable, FetchableRecord, MutablePersistableRecord {
    /// Row id.
    public var id: Int64?
    /// Who favourited it (1-100 characters).
    public var favoritedBy: String
    /// The element's name as the catalogue spells it.
    public var elementName: String
    /// The element's symbol.
    public var elementSymbol: String
    /// When it was stored (ISO 8601, UTC).
    public var createdAt: String

    public static let databaseTableName = "favorite"

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// Favourites in SQLite (GRDB, WAL journal): user data beside the cache, never removed by `tilecache clear`.
///
/// Every write is a transaction, so a crash loses at most the write in flight and never corrupts the file.
/// Thread-safety: a `DatabasePool` serialises writes and allows concurrent reads; call from any task.
public final class FavoritesStore: Sendable {
    private let database: DatabasePool

    /// Opens (creating and migrating as needed) the database at `path`.
    ///
    /// - Throws: `FavoritesStoreError` naming the path and the reason when it cannot be created, opened or migrated.
    public init(path: String) throws(FavoritesStoreError) {
        do {
            database = try Self.open(path)
        } catch {
            throw FavoritesStoreError(path: path, reason: error)
        }
    }

    private static func open(_ path: String) throws -> DatabasePool {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { try LocalDirectory.create(directory) }
        let database = try DatabasePool(path: path)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.create(table: Favorite.databaseTableName) { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("favoritedBy", .text).notNull().indexed()
                table.column("elementName", .text).notNull()
                table.column("elementSymbol", .text).notNull()
                table.column("createdAt", .text).notNull()
            }
        }
        try migrator.migrate(database)
        return database
    }

    /// Stores a favourite and returns it with its id and creation time.
    public func add(favoritedBy: String, element: Element) throws -> Favorite {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var favorite = Favorite(id: nil, favoritedBy: favoritedBy, elementName: element.name, elementSymbol: element.symbol,
                                createdAt: formatter.string(from: Date()))
        try database.write { db in try favorite.insert(db) }
        return favorite
    }

    /// Favourites, oldest first, of one person when `favoritedBy` is given.
    public func list(favoritedBy: String?) throws -> [Favorite] {
        try database.read { db in
            var request = Favorite.order(Column("id"))
            if let favoritedBy { request = request.filter(Column("favoritedBy") == favoritedBy) }
            return try request.fetchAll(db)
        }
    }

    /// Whether the database answers a query (for /healthz).
    public func isHealthy() -> Bool {
        (try? database.read { db in try Int.fetchOne(db, sql: "SELECT 1") }) == 1
    }
}

/// The favourites database could not be opened: its path and why.
public struct FavoritesStoreError: Error, Sendable, CustomStringConvertible {
    /// The database file.
    public var path: String
    /// Why, in words (SQLite's or the file system's message).
    public var message: String

    init(path: String, reason: any Error) {
        self.path = path
        if let database = reason as? DatabaseError {
            message = database.message ?? "SQLite error \(database.resultCode)"
        } else if let directory = reason as? ImageCoreError {
            message = directory.message
        } else {
            message = "\(reason)"
        }
    }

    public var description: String { "cannot open the favourites database \(path): \(message)" }
}

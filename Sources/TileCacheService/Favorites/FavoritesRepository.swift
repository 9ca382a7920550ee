public import Catalogue
import Foundation
public import GRDB
import ImageCore
public import Logging
public import ServiceLifecycle

/// Where favourites live: the embedded SQLite file (one machine), or PostgreSQL (a fleet). The service talks to them
/// only through this protocol; both implementations run the same tests.
///
/// Semantics both keep: ids are never reused (also after deletes), `createdAt` is set once, lists are oldest first,
/// and a call that returns has committed (a favourite answered with 201 survives a crash of either database).
///
/// A repository is a `Service`: its `run()` (PostgreSQL's connection pool) runs beside the HTTP server in the
/// application's service group, started before it and stopped after it has drained, as hummingbird-examples'
/// todos-postgres runs its `PostgresClient`. Calls made while it does not run wait for it (PostgreSQL) or work
/// without it (SQLite).
public protocol FavoritesRepository: Service {
    /// Where the favourites are, for logs and errors: a file path, or a PostgreSQL URL with the password masked.
    var location: String { get }
    /// Connects and creates or migrates the schema; what `serve` does at start.
    func prepare() async throws(FavoritesStoreError)
    /// Stores a new favourite and returns it with its id.
    ///
    /// - Throws: `FavoritesQuotaExceeded` when `favoritedBy`'s favourites would pass `FavoritesQuota` (checked in
    ///   the same statement or transaction as the insert).
    func add(favoritedBy: String, elementNumber: Int, body: String) async throws -> Favorite
    /// The favourite with this id, or nil.
    func favorite(id: Int64) async throws -> Favorite?
    /// Replaces the body of favourite `id`, keeping its id and creation time; nil when there is no such favourite.
    ///
    /// - Throws: `FavoritesQuotaExceeded` as `add` does (the replaced favourite does not count).
    func replace(id: Int64, favoritedBy: String, elementNumber: Int, body: String) async throws -> Favorite?
    /// Removes favourite `id` and returns it; nil when there is no such favourite.
    func remove(id: Int64) async throws -> Favorite?
    /// Up to `limit` favourites with ids above `after`, oldest first, of one person when `favoritedBy` is given: a
    /// batch of a scan for the queries the database does not answer (`search`, `sortBy`, other filters), which reads
    /// every favourite a batch at a time, each batch by the primary key.
    func list(favoritedBy: String?, after: Int64, limit: Int) async throws -> [Favorite]
    /// One page of the favourites `list` would return, read from the database alone: `limit` of them after
    /// `offset`, and how many there are in all.
    func page(favoritedBy: String?, offset: Int, limit: Int) async throws -> (favorites: [Favorite], total: Int)
    /// Whether the database answers a query now (for /healthz).
    func isHealthy() async -> Bool
}

/// What one person's favourites (one `favoritedBy`) may total: the mock API had no bound, so one client could post
/// 300 favourites of 63 KB in 5 s and make every read of the list 18 MB.
public enum FavoritesQuota {
    /// Most favourites per person (the catalogue has 118 elements; duplicates are allowed, as in the mock API).
    public static let count = 1_000
    /// Most bytes of stored bodies per person (1 MiB: a favourite is usually under 200 bytes, at most 64 KiB).
    public static let bytes = 1024 * 1024
}

/// A write refused because it would take a person's favourites past `FavoritesQuota`.
public struct FavoritesQuotaExceeded: Error, Sendable, CustomStringConvertible {
    public var favoritedBy: String
    public var description: String {
        "'\(favoritedBy.prefix(100))' has as many favourites as one person may keep (\(FavoritesQuota.count), or \(FavoritesQuota.bytes / 1024) KiB of them): remove some first"
    }
}

/// Which database holds the favourites: `--db` (or `TILECACHE_DATABASE_URL`) is a path for SQLite or a
/// `postgres://` URL.
public enum FavoritesDatabase: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(PostgresLocation)

    /// The environment variable that names the database when `--db` is not given.
    public static let variable = "TILECACHE_DATABASE_URL"

    /// Reads `value`: `postgres://` or `postgresql://` is PostgreSQL, anything else a SQLite file path.
    ///
    /// - Throws: `FavoritesStoreError` naming the URL (password masked) and what is wrong with it.
    public init(_ value: String) throws(FavoritesStoreError) {
        let lowered = value.lowercased()
        if lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") {
            self = .postgres(try PostgresLocation(url: value))
        } else {
            self = .sqlite(path: value)
        }
    }

    /// The path, or the URL with the password masked.
    public var description: String {
        switch self {
        case .sqlite(let path): path
        case .postgres(let location): location.description
        }
    }

    /// The repository for this database (not yet prepared: call `prepare()`).
    ///
    /// - Throws: `FavoritesStoreError` when the SQLite file cannot be opened or migrated.
    public func repository(catalogue: ElementCatalogue = .standard, callTimeout: Duration = .seconds(3),
                           logger: Logger) throws(FavoritesStoreError) -> any FavoritesRepository {
        switch self {
        case .sqlite(let path): try SQLiteFavorites(path: path, catalogue: catalogue)
        case .postgres(let location): PostgresFavorites(location: location, logger: logger, callDeadline: callTimeout)
        }
    }
}

/// A PostgreSQL server and database from `postgres://USER:PASSWORD@HOST:PORT/DB[?sslmode=MODE]`.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    /// libpq's `sslmode`s but `allow`: `require` encrypts without checking the certificate; `verify-ca` checks it
    /// against the trusted roots (PGSSLROOTCERT, else Debian's bundle of the system's roots) and `verify-full` also
    /// checks that it names the host.
    public enum TLSMode: String, Sendable, Equatable {
        case disable, prefer, require
        case verifyCA = "verify-ca", verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var username: String
    public var password: String?
    public var database: String
    /// libpq's `sslmode` (default `prefer`, as libpq's): `prefer` falls back to plain TCP when the server has no TLS.
    public var tls: TLSMode

    /// - Throws: `FavoritesStoreError` naming the URL (password masked) and what is wrong.
    public init(url: String) throws(FavoritesStoreError) {
        func invalid(_ reason: String) -> FavoritesStoreError {
            FavoritesStoreError(location: PostgresLocation.mask(url), message: reason)
        }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "postgres" || scheme == "postgresql" else {
            throw invalid("not a URL of the form postgres://USER:PASSWORD@HOST:PORT/DB")
        }
        guard let host = components.host, !host.isEmpty else { throw invalid("no host (postgres://USER:PASSWORD@HOST:PORT/DB)") }
        guard let user = components.user, !user.isEmpty else { throw invalid("no user name (postgres://USER:PASSWORD@HOST:PORT/DB)") }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else { throw invalid("no database name after the host (postgres://USER:PASSWORD@HOST:PORT/DB)") }
        if let port = components.port, !(1...65535).contains(port) { throw invalid("port \(port) is not 1-65535") }
        var tls = TLSMode.prefer
        for item in components.queryItems ?? [] {
            switch item.name {
            case "sslmode":
                guard let value = item.value, let mode = TLSMode(rawValue: value) else {
                    throw invalid("sslmode must be disable, prefer, require, verify-ca or verify-full, not '\(item.value ?? "")'")
                }
                tls = mode
            default:
                throw invalid("unsupported parameter '\(item.name)' (only sslmode)")
            }
        }
        self.host = host
        port = components.port ?? 5432
        username = components.percentEncodedUser?.removingPercentEncoding ?? user
        password = components.percentEncodedPassword?.removingPercentEncoding
        self.database = database.removingPercentEncoding ?? database
        self.tls = tls
    }

    /// `postgres://USER:***@HOST:PORT/DB`: never the password.
    public var description: String {
        "postgres://\(username)\(password == nil ? "" : ":***")@\(URLAuthority.string(host: host, port: port))/\(database)"
    }

    /// `url` with whatever stands between `://USER:` and `@` replaced by `***`, for errors about unparseable URLs.
    public static func mask(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url.range(of: "@", options: .backwards),
              scheme.upperBound < at.lowerBound else { return url }
        let credentials = url[scheme.upperBound..<at.lowerBound]
        guard let colon = credentials.firstIndex(of: ":") else { return url }
        return url[..<credentials.index(after: colon)] + "***" + url[at.lowerBound...]
    }
}

/// One stored favourite: the object as posted (checked and completed, see `FavoriteBody`), with the server's id and time.
public struct Favorite: Sendable, Equatable, FetchableRecord, MutablePersistableRecord {
    /// Row id (the API shows it as a string).
    public var id: Int64?
    /// Who favourited it (indexed, for `?favoritedBy=`).
    public var favoritedBy: String
    /// The element's atomic number.
    public var elementNumber: Int
    /// The posted object as JSON text, without `id` and `createdAt` (the server's own).
    public var body: String
    /// When it was first stored (ISO 8601, UTC, with milliseconds).
    public var createdAt: String

    public static let databaseTableName = "favorite"

    public init(id: Int64? = nil, favoritedBy: String, elementNumber: Int, body: String, createdAt: String) {
        self.id = id
        self.favoritedBy = favoritedBy
        self.elementNumber = elementNumber
        self.body = body
        self.createdAt = createdAt
    }

    public init(row: Row) throws {
        id = row["id"]
        favoritedBy = row["favoritedBy"]
        elementNumber = row["elementNumber"]
        body = row["body"]
        createdAt = row["createdAt"]
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["favoritedBy"] = favoritedBy
        container["elementNumber"] = elementNumber
        container["body"] = body
        container["createdAt"] = createdAt
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    /// The time stamp new favourites get: ISO 8601, UTC, milliseconds.
    public static func now() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date())
    }
}

/// The favourites database could not be opened, reached or migrated: where (a path, or a URL with the password
/// masked) and why.
public struct FavoritesStoreError: Error, Sendable, CustomStringConvertible {
    /// The database file or the masked URL.
    public var location: String
    /// Why, in words (SQLite's, PostgreSQL's or the file system's message).
    public var message: String

    init(location: String, message: String) {
        self.location = location
        self.message = message
    }

    init(location: String, reason: any Error) {
        self.location = location
        if let database = reason as? DatabaseError {
            message = database.message ?? "SQLite error \(database.resultCode)"
        } else if let directory = reason as? ImageCoreError {
            message = directory.message
        } else {
            message = "\(reason)"
        }
    }

    public var description: String { "cannot open the favourites database \(location): \(message)" }
}

import Foundation
import GRDB

#if canImport(Glibc)
import Glibc
#endif

/// The disk cache's index: a row per entry file (its name, size and last access) and the running totals, in SQLite
/// (`index.sqlite` in the cache directory, WAL journal), shared by every process that uses the directory.
///
/// - Every change of the entries directory (an entry moved into place, evicted or removed) is made inside one of this
///   index's write transactions (`BEGIN IMMEDIATE`: SQLite's lock on the file is the lock between processes), so files
///   and rows agree between transactions. Entry files are written before, outside the lock.
/// - A process killed inside a transaction leaves at most a file without a row, or a row without a file: `reconcile`,
///   run when a cache is opened for writing (O(n) once), repairs both; a read that finds a row's file missing drops it.
/// - No cost grows with the number of entries: a store, removal or touch is a B-tree update, eviction reads the least
///   recently used rows through an index on the access time, and triggers keep the count and byte totals.
/// - `synchronous = NORMAL`: a machine crash may lose the last transactions, never the file's consistency, and what
///   they recorded is found again by `reconcile`. A damaged index file is set aside and rebuilt from the directory.
///
/// Thread-safety: one `DatabaseQueue` serialises every call, which blocks: call from a thread made for blocking work.
final class DiskCacheIndex: Sendable {
    /// An entry as the index knows it.
    struct Row: Sendable, Hashable {
        var name: String
        var size: Int
    }

    /// A write transaction's view of the index: the changes it may make.
    struct Transaction {
        fileprivate let db: Database

        /// The count and total size of the indexed entries.
        func totals() throws -> (count: Int, bytes: Int) {
            let row = try Self.fetchRow(db, "SELECT count, bytes FROM totals WHERE id = 0")
            return (row?["count"] ?? 0, row?["bytes"] ?? 0)
        }

        /// Adds the entry `name`, or replaces its size and access time.
        func upsert(_ name: String, size: Int, lastAccess: Int64) throws {
            try db.cachedStatement(sql: """
                INSERT INTO entry (name, size, lastAccess) VALUES (?, ?, ?)
                ON CONFLICT (name) DO UPDATE SET size = excluded.size, lastAccess = excluded.lastAccess
                """).execute(arguments: [name, size, lastAccess])
        }

        /// Moves `name`'s access time forward to `lastAccess` (never back: another process may have read it later).
        func touch(_ name: String, lastAccess: Int64) throws {
            try db.cachedStatement(sql: "UPDATE entry SET lastAccess = ? WHERE name = ? AND lastAccess < ?")
                .execute(arguments: [lastAccess, name, lastAccess])
        }

        /// Removes `name`'s row; whether there was one.
        @discardableResult
        func delete(_ name: String) throws -> Bool {
            try db.cachedStatement(sql: "DELETE FROM entry WHERE name = ?").execute(arguments: [name])
            return db.changesCount > 0
        }

        /// Removes rows, least recently used first, until the total is at most `limit`; the rows removed.
        func evict(downTo limit: Int) throws -> [Row] {
            var bytes = try totals().bytes
            var evicted: [Row] = []
            while bytes > limit {
                let oldest = try Row.fetch(db, "SELECT name, size FROM entry ORDER BY lastAccess, name LIMIT 32")
                if oldest.isEmpty { break }
                for row in oldest where bytes > limit {
                    try delete(row.name)
                    bytes -= row.size
                    evicted.append(row)
                }
            }
            return evicted
        }

        /// Every row's name.
        func allNames() throws -> [String] {
            try String.fetchAll(db.cachedStatement(sql: "SELECT name FROM entry"))
        }

        /// Whether `name` has a row.
        func contains(_ name: String) throws -> Bool {
            try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM entry WHERE name = ?"), arguments: [name]) ?? false
        }

        /// Sets `name`'s size to its file's, when they differ.
        func resize(_ name: String, to size: Int) throws {
            try db.cachedStatement(sql: "UPDATE entry SET size = ? WHERE name = ? AND size != ?").execute(arguments: [size, name, size])
        }

        /// Records that process `pid` has the cache open for writing (once more), and drops the records of processes
        /// that no longer exist; whether there were any (a writer that ended without releasing the cache).
        func registerWriter(_ pid: Int32) throws -> Bool {
            var unclean = false
            for other in try Int32.fetchAll(db.cachedStatement(sql: "SELECT pid FROM writer")) where other != pid {
                guard kill(other, 0) == -1, errno == ESRCH else { continue }
                try db.cachedStatement(sql: "DELETE FROM writer WHERE pid = ?").execute(arguments: [other])
                unclean = true
            }
            try db.cachedStatement(sql: "INSERT INTO writer (pid, opens) VALUES (?, 1) ON CONFLICT (pid) DO UPDATE SET opens = opens + 1")
                .execute(arguments: [pid])
            return unclean
        }

        /// Records that process `pid` released one of its open caches.
        func unregisterWriter(_ pid: Int32) throws {
            try db.cachedStatement(sql: "UPDATE writer SET opens = opens - 1 WHERE pid = ?").execute(arguments: [pid])
            try db.cachedStatement(sql: "DELETE FROM writer WHERE pid = ? AND opens <= 0").execute(arguments: [pid])
        }

        /// Removes every row, and every answer that an image is missing.
        func deleteAll() throws {
            try db.execute(sql: "DELETE FROM entry; DELETE FROM missing")
        }

        /// Remembers that the image under `key` is missing upstream, replacing what was remembered; drops up to 64
        /// expired answers on the way, so the table holds about the answers of the last lifetime.
        func rememberKnownMissing(_ key: String, _ known: KnownMissing) throws {
            try db.cachedStatement(sql: """
                INSERT INTO missing (key, status, message, storedAt, until) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET status = excluded.status, message = excluded.message,
                                                storedAt = excluded.storedAt, until = excluded.until
                """).execute(arguments: [key, known.status, known.message, known.storedAt.timeIntervalSince1970,
                                         known.until.timeIntervalSince1970])
            try db.cachedStatement(sql: "DELETE FROM missing WHERE key IN (SELECT key FROM missing WHERE until < ? ORDER BY until LIMIT 64)")
                .execute(arguments: [known.storedAt.timeIntervalSince1970])
        }

        /// Forgets what is remembered of `key`.
        func forgetKnownMissing(_ key: String) throws {
            try db.cachedStatement(sql: "DELETE FROM missing WHERE key = ?").execute(arguments: [key])
        }

        fileprivate static func fetchRow(_ db: Database, _ sql: String) throws -> GRDB.Row? {
            try GRDB.Row.fetchOne(db.cachedStatement(sql: sql))
        }
    }

    /// The index file's path.
    let path: String
    private let database: DatabaseQueue

    /// Opens (creating if needed) the index at `path`; a file that is not a usable index (damaged, or another
    /// program's) is renamed aside to `path.damaged` and a new one is created, which `reconcile` then fills.
    ///
    /// - Throws: `.refused` when the file system refuses the writes opening needs, `.failed` with `.io` naming the path
    ///   when the file cannot be created, opened or read otherwise.
    /// - Parameter lock: runs its body holding the cache directory's lock between processes (`DiskCache.withLock`):
    ///   a damaged index is set aside under it, after trying it once more (another process may have rebuilt it).
    /// Why an index could not be opened: the file system refuses writes (full, read-only, I/O errors; the cache can
    /// still be read from its files), or anything else.
    enum OpenFailure: Error {
        case refused(String)
        case failed(ImageCoreError)
    }

    init(path: String, lock: (() throws(ImageCoreError) -> Void) throws(ImageCoreError) -> Void,
         onRebuild: (String) -> Void) throws(OpenFailure) {
        self.path = path
        var opened: DatabaseQueue?
        var rebuiltBecause: String?
        defer { if let rebuiltBecause { onRebuild(rebuiltBecause) } }
        do {
            opened = try Self.open(path)
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            do throws(ImageCoreError) {
                try lock { () throws(ImageCoreError) in
                do {
                    opened = try Self.open(path)
                    return
                } catch let again as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(again.resultCode) {
                    rebuiltBecause = Self.describe(again)
                } catch {
                    throw ImageCoreError(.io, subject: path, message: "cannot open the cache index: \(Self.describe(error))")
                }
                // The journal files go with it: a WAL replayed into a new file would bring the damaged pages back.
                for (suffix, aside) in [("", ".damaged"), ("-wal", ".damaged-wal"), ("-shm", ".damaged-shm")] {
                    guard rename(path + suffix, path + aside) == 0 || errno == ENOENT else {
                        throw ImageCoreError(.io, subject: path, message: "cannot set the damaged index aside: \(String(cString: strerror(errno)))")
                    }
                }
                do {
                    opened = try Self.open(path)
                } catch {
                    throw ImageCoreError(.io, subject: path, message: "cannot create the cache index: \(Self.describe(error))")
                }
                }
            } catch {
                throw .failed(error)
            }
        } catch {
            if Self.refusesWrites(error) { throw .refused(Self.describe(error)) }
            throw .failed(ImageCoreError(.io, subject: path, message: "cannot open the cache index: \(Self.describe(error))"))
        }
        guard let opened else { throw .failed(ImageCoreError(.io, subject: path, message: "cannot open the cache index")) }
        database = opened
    }

    private static func open(_ path: String) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.journalMode = .wal
        // Another process's transaction is short (a rename, a row or two): wait for it rather than fail.
        configuration.busyMode = .timeout(60)
        configuration.label = "tilecache.disk-cache.index"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA journal_size_limit = 4194304")
        }
        let database = try DatabaseQueue(path: path, configuration: configuration)
        try database.inDatabase { db in
            try db.inTransaction(.immediate) {
                // Reading the schema here also proves the file is a database (a damaged one throws NOTADB/CORRUPT).
                let version = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                if version == 0 {
                    try db.execute(sql: """
                        CREATE TABLE entry (name TEXT PRIMARY KEY NOT NULL, size INTEGER NOT NULL,
                                            lastAccess INTEGER NOT NULL) WITHOUT ROWID;
                        CREATE INDEX entry_lastAccess ON entry (lastAccess);
                        CREATE TABLE totals (id INTEGER PRIMARY KEY CHECK (id = 0), count INTEGER NOT NULL,
                                             bytes INTEGER NOT NULL);
                        INSERT INTO totals VALUES (0, 0, 0);
                        CREATE TRIGGER entry_added AFTER INSERT ON entry
                            BEGIN UPDATE totals SET count = count + 1, bytes = bytes + NEW.size; END;
                        CREATE TRIGGER entry_removed AFTER DELETE ON entry
                            BEGIN UPDATE totals SET count = count - 1, bytes = bytes - OLD.size; END;
                        CREATE TRIGGER entry_resized AFTER UPDATE OF size ON entry
                            BEGIN UPDATE totals SET bytes = bytes - OLD.size + NEW.size; END;
                        PRAGMA user_version = 1;
                        """)
                } else if version != 1 {
                    // A newer tilecache's index (a rolling upgrade): never set aside or rebuilt by this one.
                    throw DatabaseError(resultCode: .SQLITE_ERROR, message: """
                        the index has schema version \(version), written by a newer tilecache (this one reads version 1)
                        """)
                }
                // Processes that have the cache open for writing (see `registerWriter`).
                try db.execute(sql: "CREATE TABLE IF NOT EXISTS writer (pid INTEGER PRIMARY KEY, opens INTEGER NOT NULL)")
                // Answers that an image is missing upstream (`NegativeCache`), by cache key, until they expire. Like
                // `writer`, a table an older tilecache of the same schema version leaves alone.
                try db.execute(sql: """
                    CREATE TABLE IF NOT EXISTS missing (key TEXT PRIMARY KEY NOT NULL, status INTEGER NOT NULL,
                                                        message TEXT NOT NULL, storedAt REAL NOT NULL,
                                                        until REAL NOT NULL) WITHOUT ROWID;
                    CREATE INDEX IF NOT EXISTS missing_until ON missing (until);
                    """)
                return .commit
            }
        }
        return database
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`: no other process changes the index or, by the cache's
    /// rule, the entries directory until it ends); commits when it returns, rolls back when it throws.
    func write<T>(_ body: (Transaction) throws -> T) throws -> T {
        try database.inDatabase { db in
            var result: T?
            try db.inTransaction(.immediate) {
                result = try body(Transaction(db: db))
                return .commit
            }
            return result!
        }
    }

    /// The count and total size of the indexed entries.
    func totals() throws -> (count: Int, bytes: Int) {
        try database.inDatabase { db in try Transaction(db: db).totals() }
    }

    /// Whether `name` has a row.
    func contains(_ name: String) throws -> Bool {
        try database.inDatabase { db in try Transaction(db: db).contains(name) }
    }

    /// The answer remembered that the image under `key` is missing, when it has not expired by `now`.
    func knownMissing(_ key: String, now: Date) throws -> KnownMissing? {
        try database.inDatabase { db in
            let row = try GRDB.Row.fetchOne(db.cachedStatement(sql: "SELECT status, message, storedAt, until FROM missing WHERE key = ? AND until > ?"),
                                            arguments: [key, now.timeIntervalSince1970])
            return row.map { row in
                KnownMissing(status: row["status"], message: row["message"], storedAt: Date(timeIntervalSince1970: row["storedAt"]),
                             until: Date(timeIntervalSince1970: row["until"]))
            }
        }
    }

    /// Every row's name.
    func allNames() throws -> [String] {
        try database.inDatabase { db in try Transaction(db: db).allNames() }
    }

    /// What an error from this index says, for a person.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DatabaseError else { return "\(error)" }
        switch error.resultCode {
        case .SQLITE_FULL: return String(cString: strerror(ENOSPC))
        case .SQLITE_READONLY: return String(cString: strerror(EROFS))
        default: return error.message ?? "SQLite error \(error.resultCode)"
        }
    }

    /// Whether `error` means the file system refuses writes to the directory (full, read-only, no permission, I/O).
    static func refusesWrites(_ error: any Error) -> Bool {
        guard let error = error as? DatabaseError else { return false }
        return [.SQLITE_FULL, .SQLITE_READONLY, .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_PERM].contains(error.resultCode)
    }
}

extension DiskCacheIndex.Row: FetchableRecord {
    init(row: GRDB.Row) {
        self.init(name: row["name"], size: row["size"])
    }

    fileprivate static func fetch(_ db: Database, _ sql: String) throws -> [Self] {
        try fetchAll(db.cachedStatement(sql: sql))
    }
}

import CLibPQ
import Foundation
import ImageCore
import NIOConcurrencyHelpers
import NIOPosix

/// One connection of libpq, PostgreSQL's own client library (Debian's libpq5), whose calls block.
///
/// `@unchecked Sendable`: a `PGconn` must not be used by two threads at once, and it never is: `LibPQPool` makes
/// every connection and hands each to one call at a time (taken from and put back in its idle list under its lock).
final class LibPQConnection: @unchecked Sendable {
    private let handle: OpaquePointer

    /// Connects (blocking: up to libpq's `connect_timeout` per address) with libpq's connection keywords.
    ///
    /// - Throws: `LibPQError` with libpq's message (the server's, such as a wrong password, or the socket's).
    init(parameters: [(keyword: String, value: String)]) throws(LibPQError) {
        let keywords = parameters.map { strdup($0.keyword) } + [nil]
        let values = parameters.map { strdup($0.value) } + [nil]
        defer { (keywords + values).forEach { free($0) } }
        // A NULL in the middle would end the list early: libpq would connect without the keywords after it (sslmode).
        guard !keywords.dropLast().contains(nil), !values.dropLast().contains(nil) else {
            throw LibPQError(message: "out of memory for libpq's connection keywords", sqlState: nil)
        }
        let connection = keywords.map { UnsafePointer($0) }.withUnsafeBufferPointer { keywords in
            values.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
                PQconnectdbParams(keywords.baseAddress, values.baseAddress, 0)
            }
        }
        // NULL only when libpq cannot allocate the connection object.
        guard let connection else { throw LibPQError(message: "libpq could not allocate a connection", sqlState: nil) }
        guard PQstatus(connection) == CONNECTION_OK else {
            let error = LibPQError(connection: connection)
            PQfinish(connection)
            throw error
        }
        handle = connection
    }

    deinit { PQfinish(handle) }

    /// Whether the connection can serve another call: connected, and no transaction left open.
    var isReusable: Bool {
        PQstatus(handle) == CONNECTION_OK && PQtransactionStatus(handle) == PQTRANS_IDLE
    }

    /// Whether an idle connection is still good, checked before it is used. The server sends an idle connection
    /// nothing unasked (the service never LISTENs), so anything waiting on its socket is the server's goodbye: a FATAL
    /// notice as it shut down, or the end of the stream. Without this check, the first call on each idle connection
    /// after a restart failed (a 503).
    var isStillOpen: Bool {
        let socket = PQsocket(handle)
        guard socket >= 0, PQstatus(handle) == CONNECTION_OK else { return false }
        var event = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        // 0: nothing waiting. 1: something (or the end, or an error) waiting. -1: poll failed; the connection is not trusted.
        return poll(&event, 1, 0) == 0
    }

    /// Runs one statement with its parameters (text, `$1`...; nil is NULL) and returns its rows as text (nil for NULL).
    ///
    /// - Throws: `LibPQError`: the server's error (with its SQLSTATE), or the connection's when it broke.
    @discardableResult
    func execute(_ statement: String, _ parameters: [String?] = []) throws(LibPQError) -> [[String?]] {
        let values = parameters.map { $0.map { strdup($0) } ?? nil }
        defer { values.forEach { free($0) } }
        // A value strdup could not copy would be sent as NULL.
        guard zip(parameters, values).allSatisfy({ $0.0 == nil || $0.1 != nil }) else {
            throw LibPQError(message: "out of memory for the statement's parameters", sqlState: nil)
        }
        let result = values.map { UnsafePointer($0) }.withUnsafeBufferPointer { values in
            PQexecParams(handle, statement, Int32(values.count), nil, values.baseAddress, nil, nil, 0)
        }
        // NULL: out of memory, or the command could not be sent at all (the connection is gone).
        guard let result else { throw LibPQError(connection: handle) }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK:
            return []
        case PGRES_TUPLES_OK:
            let (rows, columns) = (PQntuples(result), PQnfields(result))
            return (0..<rows).map { row in
                (0..<columns).map { column in
                    PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
                }
            }
        default:
            throw LibPQError(result: result, connection: handle)
        }
    }
}

/// What libpq or the server said went wrong.
struct LibPQError: Error, CustomStringConvertible {
    /// The reason on one line: the server's own words when it answered ("password authentication failed for user
    /// ..."), else each address tried with the system's reason ("127.0.0.1:5432: Connection refused").
    var message: String
    /// The server's SQLSTATE of a statement's error (`42P01`...), nil for a connection's.
    var sqlState: String?
    /// Whether the server answered the connection with an error of its own (a wrong password, no such database), which
    /// retrying will not change; false when it could not be reached, or was starting up or shutting down.
    var isServerAnswer: Bool

    init(message: String, sqlState: String?, isServerAnswer: Bool = false) {
        self.message = message
        self.sqlState = sqlState
        self.isServerAnswer = isServerAnswer || sqlState != nil
    }

    /// The error of a failed connection or of a statement that could not be sent.
    init(connection: OpaquePointer) {
        let (message, fatal) = Self.connectionMessage(PQerrorMessage(connection))
        self.init(message: message, sqlState: nil,
                  isServerAnswer: fatal && !message.contains("starting up") && !message.contains("shutting down"))
    }

    /// The error a statement's result carries.
    init(result: OpaquePointer, connection: OpaquePointer) {
        let field = { (code: UInt8) in PQresultErrorField(result, Int32(code)).map { String(cString: $0) } }
        if let primary = field(UInt8(ascii: "M")), !primary.isEmpty {
            self.init(message: primary, sqlState: field(UInt8(ascii: "C")))
        } else {
            self.init(connection: connection)
        }
    }

    var description: String { message }

    /// libpq's message about a connection on one line, and whether the server sent it (`FATAL:`). libpq writes one line
    /// per address tried, `connection to server at "HOST" (ADDRESS), port PORT failed: REASON`, each maybe followed by
    /// a hint (`Is the server running on that host...`); each becomes `ADDRESS:PORT: REASON`, without the hints.
    private static func connectionMessage(_ text: UnsafePointer<CChar>?) -> (message: String, fatal: Bool) {
        guard let text else { return ("libpq gave no message", false) }
        // ADDRESS only when HOST is a name.
        let failedConnection = #/connection to server at "([^"]*)"(?: \(([^)]*)\))?, port (\d+) failed: (.*)/#
        var fatal = false
        let lines = String(cString: text).split(whereSeparator: \.isNewline).compactMap { line -> String? in
            var line = line.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ").trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty, !line.hasPrefix("Is the server running") else { return nil }
            if let match = line.wholeMatch(of: failedConnection), let port = Int(match.output.3) {
                line = URLAuthority.string(host: String(match.output.2 ?? match.output.1), port: port) + ": " + match.output.4
            }
            if line.contains("FATAL: ") {
                fatal = true
                line = line.replacingOccurrences(of: "FATAL: ", with: "")
            }
            return line
        }
        return (lines.isEmpty ? "libpq gave no message" : lines.joined(separator: "; "), fatal)
    }
}

/// libpq connections for `PostgresFavorites`: at most `limit` calls at once, each on a connection of its own and a
/// thread of the pool's (libpq blocks; Swift's cooperative threads and NIO's shared pool must not wait on a socket).
/// A connection goes back to the idle list after a call unless it broke or was left in a transaction; the next call
/// then connects again, which is how the pool reconnects after an outage.
final class LibPQPool: Sendable {
    private let parameters: [(keyword: String, value: String)]
    private let permits: AsyncSemaphore
    private let idle = NIOLockedValueBox<[LibPQConnection]>([])
    private let threads: NIOThreadPool

    init(parameters: [(keyword: String, value: String)], limit: Int) {
        self.parameters = parameters
        permits = AsyncSemaphore(limit: limit)
        threads = NIOThreadPool(numberOfThreads: limit)
        threads.start()
    }

    deinit {
        // Nothing is in flight: every call's work item holds the pool.
        threads.shutdownGracefully { _ in }
    }

    /// `body`'s result, run on a pooled connection on one of the pool's threads. A caller that stops waiting (its
    /// deadline) does not stop the body: it finishes on its thread, and only then are its connection and permit given
    /// back, so the pool never runs more than `limit` calls.
    func withConnection<T: Sendable>(_ body: @escaping @Sendable (LibPQConnection) throws -> T) async throws -> T {
        try await permits.acquire()
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>, Never>) in
            threads.submit { [self] _ in
                let result: Result<T, any Error>
                do {
                    let connection = try takeIdle() ?? LibPQConnection(parameters: parameters)
                    result = Result(catching: { try body(connection) })
                    if connection.isReusable { idle.withLockedValue { $0.append(connection) } }
                } catch {
                    result = .failure(error)
                }
                permits.release()
                continuation.resume(returning: result)
            }
        }
        return try result.get()
    }

    /// The most recently used idle connection that is still open; those found closed are dropped.
    private func takeIdle() -> LibPQConnection? {
        while let connection = idle.withLockedValue({ $0.popLast() }) {
            if connection.isStillOpen { return connection }
        }
        return nil
    }

    /// Closes the idle connections (a graceful stop); calls after it connect again.
    func closeIdle() {
        let closing = idle.withLockedValue { connections in
            defer { connections.removeAll() }
            return connections
        }
        _ = closing  // closed (PQfinish) as the last reference goes, outside the lock
    }
}

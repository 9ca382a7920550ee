import Foundation
import Hummingbird
public import HummingbirdTesting
import ImageCore
import Logging
public import TileCacheOrigin
public import TileCacheService
import NIOFoundationCompat

/// An origin, a service configuration pointing at it, and temporary cache and database paths.
public struct ServiceHarness: Sendable {
    public let origin: OriginServer
    /// The temporary directory of the cache and the database, removed by `stop()`.
    public let directory: String
    public var configuration: ServiceConfiguration

    /// Starts an origin (configured as `originConfiguration`) and a configuration pointing at it, with favourites
    /// in `favorites` (a fresh SQLite file, or a fresh database on the shared test PostgreSQL), which `configure` may
    /// change.
    public static func start(origin originConfiguration: OriginServer.Configuration = .init(), favorites: FavoritesBackend = .sqlite,
                      _ configure: (inout ServiceConfiguration) -> Void = { _ in }) async throws -> ServiceHarness {
        let origin = try await OriginServer.start(originConfiguration)
        let directory = try makeTemporaryDirectory()
        var configuration = ServiceConfiguration()
        configuration.port = 0
        // The element API's placeholders load every listed thumbnail: most tests list elements for other reasons, and
        // would make 100 placeholders each (the suite's CPU). PlaceholderServiceTests turn them on.
        configuration.elementPlaceholders = false
        configuration.builder = origin.urlBuilder
        configuration.pipeline.diskDirectory = directory + "/cache"
        configuration.pipeline.downloader.retryPolicy.baseDelay = .milliseconds(10)
        configuration.pipeline.downloader.transferOptions.totalTimeout = TestTime.scaled(.seconds(5))
        switch favorites {
        case .sqlite: configuration.database = .sqlite(path: directory + "/favorites.sqlite")
        case .postgres: configuration.database = try FavoritesDatabase(try await PostgresServer.shared().freshDatabase())
        }
        // A debug build's SCRAM handshake, at the suite's busiest seconds, can take longer than the 3 s a service
        // waits; the outage test sets the real deadline again.
        configuration.databaseCallTimeout = TestTime.scaled(.seconds(20))
        configure(&configuration)
        return ServiceHarness(origin: origin, directory: directory, configuration: configuration)
    }

    /// The service's dependencies, built from the configuration.
    public func dependencies() throws -> ServiceDependencies {
        try ServiceDependencies(configuration: configuration, logger: Logger(label: "test"))
    }

    /// Shuts the origin down and removes the directory.
    public func stop() async {
        await origin.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Runs `body` with a test client over a service built from `harness`, then stops the harness. The default client is
/// AsyncHTTPClient over real loopback sockets, with a connection per concurrent request (`.router` would skip the
/// HTTP server, and its in-memory channels leak under LeakSanitizer; `.live` sends everything down one connection).
public func withService<T: Sendable>(_ harness: ServiceHarness, mode: TestingSetup = .ahc(.http),
                              _ body: @escaping @Sendable (any TestClientProtocol, ServiceDependencies) async throws -> T) async throws -> T {
    do {
        let dependencies = try harness.dependencies()
        try await dependencies.prepare()
        let app = try buildApplication(dependencies, logger: Logger(label: "test"))
        do {
            let result = try await app.test(mode) { client in try await body(client, dependencies) }
            await dependencies.close()
            await harness.stop()
            return result
        } catch {
            await dependencies.close()
            throw error
        }
    } catch {
        await harness.stop()
        throw error
    }
}

extension TestResponse {
    /// The body's bytes.
    public var bytes: [UInt8] { Array(buffer: body) }
    /// The body decoded as `type`, a client's model of the answer (`ServiceJSON`).
    ///
    /// - Throws: `TestFailure` naming the type and the body when it does not decode.
    public func decoded<T: Decodable>(as type: T.Type) throws -> T { try decode(type, from: Data(buffer: body)) }
    /// The `reason` of the documented error body (`ServiceJSON.ErrorBody`); nil when the body is not one.
    public var errorReason: String? { (try? decoded(as: ServiceJSON.ErrorBody.self))?.error.reason }
}

/// Where a test's favourites live: both implementations of `FavoritesRepository` run the same tests.
public enum FavoritesBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite, postgres
    public var description: String { rawValue }
}

import Foundation
import Hummingbird
import HummingbirdTesting
import ImageCore
import Logging
import TileCacheFixtures
import TileCacheOrigin
import TileCacheService

/// An origin, a service configuration pointing at it, and temporary cache and database paths.
struct ServiceHarness {
    let origin: OriginServer
    let directory: String
    var configuration: ServiceConfiguration

    static func start(origin originConfiguration: OriginServer.Configuration = .init(),
                      _ configure: (inout ServiceConfiguration) -> Void = { _ in }) async throws -> ServiceHarness {
        let origin = try await OriginServer.start(originConfiguration)
        let directory = NSTemporaryDirectory() + "tilecache-service-test-" + UUID().uuidString
        var configuration = ServiceConfiguration()
        configuration.port = 0
        configuration.builder = origin.urlBuilder
        configuration.pipeline.diskDirectory = directory + "/cache"
        configuration.pipeline.downloader.retryPolicy.baseDelay = .milliseconds(10)
        configuration.pipeline.downloader.transferOptions.totalTimeout = TestTime.scaled(.seconds(5))
        configuration.databasePath = directory + "/favorites.sqlite"
        configure(&configuration)
        return ServiceHarness(origin: origin, directory: directory, configuration: configuration)
    }

    func dependencies() throws -> ServiceDependencies {
        try ServiceDependencies(configuration: configuration, logger: Logger(label: "test"))
    }

    func stop() async {
        await origin.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Runs `body` with a test client over a service built from `harness`, then stops the harness. The default client is
/// AsyncHTTPClient over real loopback sockets, with a connection per concurrent request (`.router` would skip the
/// HTTP server, and its in-memory channels leak under LeakSanitizer; `.live` sends everything down one connection).
func withService<T: Sendable>(_ harness: ServiceHarness, mode: TestingSetup = .ahc(.http),
                              _ body: @escaping @Sendable (any TestClientProtocol, ServiceDependencies) async throws -> T) async throws -> T {
    do {
        let dependencies = try harness.dependencies()
        let app = buildApplication(dependencies, logger: Logger(label: "test"))
        let result = try await app.test(mode) { client in try await body(client, dependencies) }
        await harness.stop()
        return result
    } catch {
        await harness.stop()
        throw error
    }
}

extension TestResponse {
    var bytes: [UInt8] { Array(buffer: body) }
    var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] }
    var jsonArray: [[String: Any]]? { try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [[String: Any]] }
    var errorReason: String? { (json?["error"] as? [String: Any])?["reason"] as? String }
}

import ArgumentParser
import Catalogue
import Foundation
import ImageCore
import Logging
import TileCacheService
import Hummingbird

extension TileCacheCommand {
    /// `tilecache serve`: the image service that feeds front ends.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve the catalogue, its images, thumbnails, metrics and a web front end over HTTP.",
            discussion: """
                Endpoints are documented in docs/service.md. Stops gracefully on SIGTERM or SIGINT: no new
                connections, in-flight requests finish.

                Examples:
                  tilecache serve --port 8080 --prefetch
                  tilecache serve --tiles-base http://127.0.0.1:9000/periodictable --images-base http://127.0.0.1:9000/images-of-elements
                """)

        @Option(help: "Address to bind.")
        var host = "127.0.0.1"

        @Option(help: "Port to bind (0 = any free port).")
        var port = 8080

        @OptionGroup var hosts: HostOptions

        @OptionGroup var pipeline: PipelineOptions

        @Option(help: "Cache-Control max-age of images, in seconds.")
        var maxAge = 86_400

        @Option(help: ArgumentHelp("Same as --memory-bytes (the one memory tier holds encoded bytes when serving).", visibility: .hidden),
                transform: { try ByteSize(parsing: $0) })
        var encodedBytes: ByteSize?

        @Option(help: "Longest a client waits for an image, upstream included, in seconds (then 504).")
        var requestTimeout: Double = 60

        @Option(help: ArgumentHelp("Favourites database: a SQLite file, or postgres://USER:PASSWORD@HOST:PORT/DB shared by a fleet (default: $TILECACHE_DATABASE_URL, else favorites.sqlite beside the cache directory).",
                                   valueName: "path-or-url"))
        var db: String?

        @Flag(help: "Warm every catalogue image in the background at start.")
        var prefetch = false

        @Option(help: "Append the URL of every image request to this file (replay it with bench-cache --trace).")
        var recordTrace: String?

        @Flag(name: .shortAndLong, help: "Log every request to stderr.")
        var verbose = false

        func validate() throws {
            _ = try database()
            guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535, got \(port)") }
            guard maxAge >= 0 else { throw ValidationError("--max-age must not be negative") }
            if encodedBytes != nil, pipeline.memoryBytes != nil { throw ValidationError("give --memory-bytes or --encoded-bytes, not both") }
            if let encodedBytes, encodedBytes.bytes <= 0 { throw ValidationError("--encoded-bytes must be positive") }
            guard requestTimeout > 0, requestTimeout <= 3600 else { throw ValidationError("--request-timeout must be more than 0 and at most 3600") }
        }

        /// `--db`, else `TILECACHE_DATABASE_URL`, else favorites.sqlite beside the cache directory.
        func database(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> FavoritesDatabase {
            var value = db
            if value == nil, let variable = environment[FavoritesDatabase.variable] {
                guard !variable.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw ValidationError("\(FavoritesDatabase.variable) is set but empty: give a SQLite path or a postgres:// URL, or unset it")
                }
                value = variable
            }
            guard let value else {
                return .sqlite(path: ServiceConfiguration.defaultDatabasePath(cacheDirectory: pipeline.cacheDirectory.path))
            }
            guard !value.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ValidationError("--db '\(value)' is empty: give a SQLite path or a postgres:// URL")
            }
            do {
                return try FavoritesDatabase(value)
            } catch {
                throw RuntimeError(error.description)
            }
        }

        func run() async throws {
            var configuration = ServiceConfiguration()
            configuration.host = host
            configuration.port = port
            configuration.builder = hosts.builder
            configuration.pipeline = try pipeline.configuration(defaults: ServiceConfiguration.defaultPipeline)
            if let encodedBytes { configuration.pipeline.memoryCostLimit = encodedBytes.bytes }
            configuration.pipeline.requestTimeout = .milliseconds(Int(requestTimeout * 1000))
            configuration.requiresDiskCache = true
            configuration.maxAgeSeconds = maxAge
            configuration.database = try database()
            configuration.prefetchAtStart = prefetch
            configuration.traceFile = recordTrace
            var logger = Logger(label: "tilecache.serve") { StreamLogHandler.standardError(label: $0) }
            logger.logLevel = verbose ? .debug : .info
            let console = Console.current
            let (boundHost, database) = (configuration.host, configuration.database)
            let dependencies: ServiceDependencies
            do {
                dependencies = try ServiceDependencies(configuration: configuration, logger: logger)
            } catch let error as ImageCoreError {
                throw PipelineOptions.unusable(error)
            } catch {
                throw RuntimeError("cannot start the service: \(error)")  // the database or trace file, named
            }
            do {
                try await dependencies.prepare()
            } catch {
                throw RuntimeError(error.description)
            }
            try await pipeline.sharedStore.connect(dependencies.pipeline)
            let app = buildApplication(dependencies, logger: logger) { port in
                console.out("serving on http://\(boundHost):\(port) (favourites in \(database))\n")
            }
            do {
                try await app.runService()
                await dependencies.close()
            } catch {
                await dependencies.close()
                throw RuntimeError(listeningOn: host, port: port, error) ?? RuntimeError("the service stopped: \(error)")
            }
        }
    }
}

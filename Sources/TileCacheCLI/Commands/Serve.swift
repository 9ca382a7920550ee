import ArgumentParser
import Catalogue
import Foundation
import ImageCore
import SharedStore
import Logging
import ServiceLifecycle
import UnixSignals
import TileCacheService
import Hummingbird

extension TileCacheCommand {
    /// `tilecache serve`: the image service that feeds front ends.
    struct Serve: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Serve the catalogue, its images, thumbnails, metrics and a web front end over HTTP.",
            discussion: """
                Endpoints are documented in docs/service.md. Stops gracefully on SIGTERM or SIGINT: no new \
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

        @OptionGroup var configFile: ConfigFileOption

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

        @Option(help: ArgumentHelp("Require signed image URLs with processing options: the HMAC key, in hex (default: $TILECACHE_SIGNING_KEY; none: URLs are not signed).",
                                   valueName: "hex"))
        var signingKey: String?

        @Option(help: ArgumentHelp("The salt signed before the path, in hex (default: $TILECACHE_SIGNING_SALT, else empty).", valueName: "hex"))
        var signingSalt: String?

        @Option(help: ArgumentHelp("The only widths variants may have (after dpr), comma-separated; others are 400, and so are h, fit and enlarge, and q outside --allowed-qualities (default: any).",
                                   valueName: "w,w,..."))
        var allowedWidths: String?

        @Option(help: ArgumentHelp("The qualities q may name, comma-separated; others are 400 (default: with --allowed-widths none, so q is refused; without, any).",
                                   valueName: "q,q,..."))
        var allowedQualities: String?

        @Option(help: ArgumentHelp("Named option sets URLs may ask for with preset=NAME (or pr=NAME), imgproxy's presets: NAME:OPTIONS, comma-separated (thumb:w=128&format=webp,card:w=512&q=80).",
                                   valueName: "presets"))
        var presets: String?

        @Flag(help: "Accept only presets in image URLs: any other option is 400 (imgproxy's IMGPROXY_ONLY_PRESETS).")
        var onlyPresets = false

        @Option(help: ArgumentHelp("Serve any source URL these patterns allow behind imgproxy's URL format: URL prefixes, comma-separated, * for a part of a host or path (https://images.example.com/,https://*.cdn.example.com/), or * for any (default: $IMGPROXY_ALLOWED_SOURCES; none: open sources are off).",
                                   valueName: "patterns"))
        var allowedSources: String?

        @Flag(help: "Let open sources lead to loopback, private, link-local and other restricted addresses (default: every connection, redirects included, must reach a public address).")
        var allowPrivateSources = false

        @Flag(help: "Answer imgproxy URLs that name no format with WebP when the client's Accept names it, with Vary: Accept (default: $IMGPROXY_AUTO_WEBP, else off).")
        var autoWebp = false

        @Flag(help: "Answer URLs that name no format (imgproxy's and the catalogue's) with AVIF when the client's Accept names it, before WebP, with Vary: Accept (default: $IMGPROXY_AUTO_AVIF, else off: an AVIF encode costs several WebP ones).")
        var autoAvif = false

        @Flag(help: "Read client hints (Sec-CH-DPR, Sec-CH-Width, Sec-CH-Viewport-Width) where an image URL leaves the width or dpr open, within the allow-lists; answer Accept-CH and vary by them (default: $IMGPROXY_ENABLE_CLIENT_HINTS, else off).")
        var clientHints = false

        @Flag(inversion: .prefixedNo, help: "Give each element record its thumbnail's placeholder (thumbnail_blurhash, thumbnail_thumbhash, thumbnail_color, thumbnail_lqip); --no-element-placeholders: a list loads no image.")
        var elementPlaceholders = true

        @Option(help: ArgumentHelp("Serve thumbor URLs signed with this key, thumbor's SECURITY_KEY, as text (default: $SECURITY_KEY; none: only unsafe thumbor URLs, with --allow-unsafe-url).",
                                   valueName: "key"))
        var thumborKey: String?

        @Flag(help: "Serve thumbor's /unsafe/ URLs, unsigned (thumbor's ALLOW_UNSAFE_URL; default: $ALLOW_UNSAFE_URL, else off).")
        var allowUnsafeUrl = false

        @Option(help: ArgumentHelp("Bytes of the HMAC an imgproxy URL's signature keeps, 1 to 32 (default: $IMGPROXY_SIGNATURE_SIZE, else 32).", valueName: "n"))
        var signatureSize: Int?

        @Option(name: .customLong("resize-concurrency"), help: "Variants made at once (default: the number of cores).")
        var resizeConcurrencyGiven: Int?

        /// `--resize-concurrency`, else the number of cores.
        var resizeConcurrency: Int { resizeConcurrencyGiven ?? ProcessInfo.processInfo.activeProcessorCount }

        @Option(help: "Variants that may wait for those; one more is answered 503 with Retry-After.")
        var resizeQueue = 64

        @Option(help: ArgumentHelp("Require Authorization: Bearer <token> on POST, PUT and DELETE (401 otherwise); reads stay open (default: $TILECACHE_WRITE_TOKEN; none: writes are open, as in the seed's mock API).",
                                   valueName: "token"))
        var writeToken: String?

        @Option(help: ArgumentHelp("Pages on other origins that may call the service from a browser: * (any page may read), none, or origins that may also write (https://app.example.com,http://localhost:5173).",
                                   valueName: "origins"))
        var corsOrigin = "*"

        @Option(help: ArgumentHelp("The service's address as clients reach it (https://tiles.example.com); the JSON's thumbnail_url and image_url start with it (default: they are paths, never made from a request's Host header).",
                                   valueName: "url"))
        var publicURL: String?

        @Option(help: ArgumentHelp("Proxies (addresses or CIDR blocks, comma-separated) whose X-Forwarded-Host and X-Forwarded-Proto make the JSON's absolute URLs when --public-url is not given; from other peers those headers are dropped (default: none).",
                                   valueName: "cidrs"))
        var trustedProxies: String?

        @Option(help: ArgumentHelp("Serve HTTPS (and HTTP/2 by ALPN) with this PEM certificate chain; needs --tls-key.", valueName: "file"))
        var tlsCert: String?

        @Option(help: ArgumentHelp("The PEM private key of --tls-cert.", valueName: "file"))
        var tlsKey: String?

        @Option(help: "Longest a request's body may take to arrive, in seconds; then the connection is closed.")
        var bodyTimeout: Double = 30

        @Option(help: "Longest an answer may wait for the client to read any of it, in seconds; then the connection is closed.")
        var sendTimeout: Double = 30

        @Option(help: ArgumentHelp("Most client connections open at once; one more closes the one idle or stalled the longest (default: the descriptor limit, raised to the hard limit at start, less 64).",
                                   valueName: "n"))
        var maxConnections: Int?

        @Option(help: "Log format on stderr: text, or json (one object per line, with a line per request).")
        var logFormat: LogFormat = .text

        @Flag(name: .shortAndLong, help: "Log every request to stderr (method, path, status, bytes, duration, cache layer, request ID).")
        var verbose = false

        @Flag(inversion: .prefixedNo, help: "Answer requests for images in memory before the router, on the connection's thread (plain HTTP/1; the same headers, metrics and log lines).")
        var fastPath = true

        func validate() throws {
            _ = try database()
            guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535, got \(port)") }
            guard maxAge >= 0 else { throw ValidationError("--max-age must not be negative") }
            if encodedBytes != nil, pipeline.memoryBytes != nil { throw ValidationError("give --memory-bytes or --encoded-bytes, not both") }
            if let encodedBytes, encodedBytes.bytes <= 0 { throw ValidationError("--encoded-bytes must be positive") }
            guard requestTimeout > 0, requestTimeout <= 3600 else { throw ValidationError("--request-timeout must be more than 0 and at most 3600") }
            _ = try signer()
            _ = try sources()
            if signatureSize != nil, try signer() == nil { throw ValidationError("--signature-size needs --signing-key (or $IMGPROXY_KEY)") }
            _ = try widths()
            _ = try qualities()
            if try presetTable().isEmpty, onlyPresets { throw ValidationError("--only-presets needs --presets (the presets URLs may name)") }
            for (name, seconds) in [("--body-timeout", bodyTimeout), ("--send-timeout", sendTimeout)] where !(seconds > 0 && seconds <= 3600) {
                throw ValidationError("\(name) must be more than 0 and at most 3600 seconds, got \(seconds)")
            }
            if let maxConnections, maxConnections < 1 { throw ValidationError("--max-connections must be at least 1, got \(maxConnections)") }
            guard (1...256).contains(resizeConcurrency) else { throw ValidationError("--resize-concurrency must be 1...256, got \(resizeConcurrency)") }
            guard (0...100_000).contains(resizeQueue) else { throw ValidationError("--resize-queue must be 0...100000, got \(resizeQueue)") }
            if let writeToken, writeToken.trimmingCharacters(in: .whitespaces).isEmpty { throw ValidationError("--write-token is empty: give a token, or leave it out") }
            _ = try cors()
            _ = try publicBase()
            _ = try proxies()
            _ = try tls()
        }

        func publicBase() throws -> String? {
            do { return try publicURL.map(ServiceConfiguration.publicURL(parsing:)) } catch { throw ValidationError(error.description) }
        }

        func proxies() throws -> TrustedProxies {
            guard let trustedProxies else { return .none }
            do { return try TrustedProxies(parsing: trustedProxies) } catch { throw ValidationError(error.description) }
        }

        func cors() throws -> CORSPolicy {
            do { return try CORSPolicy(parsing: corsOrigin) } catch { throw ValidationError(error.description) }
        }

        func tls() throws -> TLSFiles? {
            switch (tlsCert, tlsKey) {
            case (nil, nil): return nil
            case (let cert?, let key?): return TLSFiles(certificateChain: cert, privateKey: key)
            case (_?, nil): throw ValidationError("--tls-cert needs --tls-key (the certificate's private key)")
            case (nil, _?): throw ValidationError("--tls-key needs --tls-cert (the certificate chain)")
            }
        }

        /// `--signing-key`/`--signing-salt`, else their environment variables; nil when no key is given.
        func signer(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URLSigner? {
            let key = signingKey ?? environment[URLSigner.keyVariable]
            let salt = signingSalt ?? environment[URLSigner.saltVariable] ?? ""
            guard let key else {
                if signingSalt != nil { throw ValidationError("--signing-salt needs --signing-key (or \(URLSigner.keyVariable))") }
                return nil
            }
            do {
                var signer = try URLSigner(keyHex: key, saltHex: salt)
                if let size = signatureSize {
                    guard (1...32).contains(size) else { throw ValidationError("--signature-size must be 1 to 32, got \(size)") }
                    signer.pathSignatureSize = size
                }
                return signer
            } catch let error as URLSignerError {
                throw ValidationError("--signing-key/--signing-salt (or \(URLSigner.keyVariable)/\(URLSigner.saltVariable)): \(error.description)")
            }
        }

        /// `--allowed-sources` (or `$IMGPROXY_ALLOWED_SOURCES`, by `ConfigurationSources`).
        func sources() throws -> AllowedSources {
            guard let text = allowedSources else { return .none }
            do {
                return try AllowedSources(text.split(separator: ",").map(String.init))
            } catch {
                throw ValidationError("--allowed-sources: \(error.description)")
            }
        }

        /// `--allowed-widths` as a set, nil when not given.
        func widths() throws -> Set<Int>? {
            guard let allowedWidths else { return nil }
            return Set(try WidthList.parse(allowedWidths, option: "--allowed-widths"))
        }

        /// `--allowed-qualities` as a set, empty when not given.
        func qualities() throws -> Set<Int> {
            guard let allowedQualities else { return [] }
            var qualities: Set<Int> = []
            for part in allowedQualities.split(separator: ",", omittingEmptySubsequences: false).map({ $0.trimmingCharacters(in: .whitespaces) }) {
                guard let quality = Int(part), (1...100).contains(quality) else {
                    throw ValidationError("--allowed-qualities: '\(part)' is not a quality from 1 to 100 (give e.g. 60,80)")
                }
                qualities.insert(quality)
            }
            return qualities
        }

        /// `--presets`, checked.
        func presetTable() throws -> [String: String] {
            guard let presets else { return [:] }
            do { return try ServiceConfiguration.presets(parsing: presets) } catch { throw ValidationError(error.description) }
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

        /// The service configuration these options describe: what `run` serves with, and what `config --show` shows.
        ///
        /// - Throws: `RuntimeError` or `ValidationError` for values that cannot be used (the shared store, `--db`).
        func serviceConfiguration() throws -> ServiceConfiguration {
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
            configuration.signer = try signer()
            configuration.allowedWidths = try widths()
            configuration.allowedQualities = try qualities()
            configuration.presets = try presetTable()
            configuration.onlyPresets = onlyPresets
            configuration.allowedSources = try sources()
            configuration.allowsPrivateSources = allowPrivateSources
            configuration.autoWebP = autoWebp
            configuration.autoAVIF = autoAvif
            configuration.clientHints = clientHints
            configuration.elementPlaceholders = elementPlaceholders
            configuration.thumborKey = thumborKey.map { Array($0.utf8) }
            configuration.allowsUnsafeThumborURLs = allowUnsafeUrl
            configuration.pipeline.maxConcurrentProcessing = resizeConcurrency
            configuration.pipeline.maxQueuedProcessing = resizeQueue
            configuration.writeToken = writeToken
            configuration.cors = try cors()
            configuration.publicURL = try publicBase()
            configuration.trustedProxies = try proxies()
            configuration.tls = try tls()
            configuration.logRequests = verbose || logFormat == .json
            configuration.fastPath = fastPath
            configuration.connectionLimits.bodyTimeout = .milliseconds(Int(bodyTimeout * 1000))
            configuration.connectionLimits.sendTimeout = .milliseconds(Int(sendTimeout * 1000))
            configuration.connectionLimits.maxConnections = maxConnections
            return configuration
        }

        func run() async throws {
            var configuration = try serviceConfiguration()
            let descriptors = ConnectionLimits.raiseDescriptorLimit()
            let connectionRoom = ConnectionLimits.defaultMaximum()
            if let maxConnections, maxConnections > connectionRoom {
                throw ValidationError("--max-connections \(maxConnections) leaves too few of the \(descriptors) file descriptors this process may open (ulimit -n) for downloads, the disk cache and the database: give at most \(connectionRoom), or raise the limit")
            }
            configuration.connectionLimits.maxConnections = maxConnections ?? connectionRoom
            var logger = logFormat.logger(label: "tilecache.serve")
            logger.logLevel = verbose ? .debug : .info
            let refused = ServiceMemory.configure()
            if !refused.isEmpty {
                logger.warning("glibc refused malloc's settings for a service (mallopt \(refused.joined(separator: ", "))): freed image buffers may stay in the heap")
            }
            if configuration.signer == nil {
                logger.notice("image URLs are not signed: anyone can ask for any variant (--signing-key makes the service require signatures)")
            }
            if !configuration.allowedSources.isEmpty {
                logger.notice("open sources are on: imgproxy\(configuration.thumborKey != nil || configuration.allowsUnsafeThumborURLs ? " and thumbor" : "") URLs may name sources matching \(configuration.allowedSources.patterns.joined(separator: ","))\(configuration.allowsPrivateSources ? ", including loopback and private addresses (--allow-private-sources)" : ", on public addresses only")")
                if configuration.allowsPrivateSources, configuration.allowedSources.patterns.contains("*") {
                    logger.warning("--allowed-sources '*' with --allow-private-sources lets anyone fetch through this service from every host it can reach: use it on a test machine only")
                }
            }
            if configuration.writeToken == nil {
                logger.notice("writes are open: anyone can add and remove favourites, as with the seed's mock API (--write-token protects them)")
            }
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
            let scheme = configuration.tls == nil ? "http" : "https"
            do {
                let app = try buildApplication(dependencies, logger: logger) { port in
                    console.out("serving on \(scheme)://\(URLAuthority.string(host: boundHost, port: port)) (favourites in \(database))\n")
                }
                // The notice last: a group shuts its services down in reverse order, so it speaks before the server drains.
                let group = ServiceGroup(configuration: .init(
                    services: [.init(service: app), .init(service: ShutdownNotice(logger: logger))],
                    gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
                try await group.run()
                await dependencies.close()
                logger.info("stopped")
            } catch let error as ServiceConfigurationError {
                await dependencies.close()
                throw RuntimeError(error.description)
            } catch {
                await dependencies.close()
                throw RuntimeError(listeningOn: host, port: port, error) ?? RuntimeError("the service stopped: \(error)")
            }
        }
    }
}

public import Catalogue
public import Hummingbird
public import ImageCore
import SharedStore
public import Logging
import HummingbirdCore
import HummingbirdHTTP2
import HummingbirdTLS
import NIOCore
import NIOSSL
public import ServiceLifecycle

/// Everything the service is built from: the catalogue, the pipeline, favourites, metrics and configuration.
/// `buildRouter` hands each controller only the parts it needs.
public struct ServiceDependencies: Sendable {
    public let configuration: ServiceConfiguration
    public let catalogue: ElementCatalogue
    /// Every image request goes through it: its memory tier holds encoded bytes and variants.
    public let pipeline: ImagePipeline
    /// What the photo host said about each photo (`has_image`).
    public let photos: PhotoAvailability
    /// SQLite or PostgreSQL (`configuration.database`).
    public let favorites: any FavoritesRepository
    public let metrics: ServiceMetrics
    public let web: WebAssets
    /// Records image requests when `configuration.traceFile` is set.
    public let trace: TraceRecorder?
    /// The service's logger.
    public let logger: Logger

    /// Builds the pipeline and favourites repository a configuration describes. A PostgreSQL repository is connected
    /// and migrated by `prepare()`, which `serve` calls before it listens.
    ///
    /// - Throws: `FavoritesStoreError` or `TraceRecorderError` when the favourites database or the trace file cannot
    ///   be opened; `ImageCoreError` (`.io`) when the disk cache cannot be used and `requiresDiskCache` is set
    ///   (otherwise the disk cache degrades with a warning).
    public init(configuration: ServiceConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        catalogue = .standard
        pipeline = configuration.requiresDiskCache
            ? try ImagePipeline(requiringDiskCacheWith: configuration.pipeline, logger: logger)
            : ImagePipeline(configuration: configuration.pipeline, logger: logger)
        metrics = ServiceMetrics(statistics: pipeline.statistics, sharedTier: pipeline.sharedTier)
        photos = PhotoAvailability()
        favorites = try configuration.database.repository(catalogue: catalogue, callTimeout: configuration.databaseCallTimeout,
                                                          logger: logger)
        web = WebAssets()
        trace = try configuration.traceFile.map { path throws(TraceRecorderError) in try TraceRecorder(path: path, logger: logger) }
    }
}

extension ServiceDependencies {
    /// Connects what needs a connection before the service listens: the favourites database's schema.
    ///
    /// - Throws: `FavoritesStoreError` naming the database (password masked) and the reason.
    public func prepare() async throws(FavoritesStoreError) {
        try await favorites.prepare()
    }

    /// What a graceful stop does after the last request: finishes the shared tier's queued writes (so a restarted
    /// fleet finds what this instance fetched). The favourites database's connections close with its service.
    public func close() async {
        await pipeline.sharedTier?.drain()
    }

    /// What runs beside the HTTP server, in the application's service group: the favourites repository (PostgreSQL's
    /// connection pool). Started before the server, stopped after it has drained.
    public var services: [any Service] { [favorites] }

    /// `body`'s result with `services` running, for callers that use the dependencies without the application (a
    /// test of the repository, a second instance's migration); they stop when it returns.
    public func withServicesRunning<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for service in services { group.addTask { try await service.run() } }
            defer { group.cancelAll() }
            return try await body()
        }
    }
}

/// The router every endpoint hangs off; tests build the same one.
public func buildRouter(_ dependencies: ServiceDependencies) -> Router<BasicRequestContext> {
    FrontDoor(dependencies).router
}

/// The service's one front door: the router, and the cached-image fast path in front of it, built together from one
/// middleware chain and one image route table (`ImageRoute.all`, registered by `ImagesController`), so the fast path
/// cannot answer differently from the router: it is the routes' own fast case, through the same middleware.
struct FrontDoor {
    let router: Router<BasicRequestContext>
    let fastPath: CachedImageFastPath

    init(_ dependencies: ServiceDependencies) {
        let configuration = dependencies.configuration
        // Outside in: metrics, request ID and log line, CORS, text answers' ETag and coding, JSON errors, the write token.
        let chain = ServiceMiddlewareChain(middlewares: [
            MetricsMiddleware(metrics: dependencies.metrics),
            RequestLogMiddleware(logRequests: configuration.logRequests, logger: dependencies.logger),
            CORSMiddleware(policy: configuration.cors, publicOrigin: configuration.publicOrigin),
            TextResponseMiddleware(),
            JSONErrorMiddleware(),
        ] + (configuration.writeToken.map { [WriteTokenMiddleware(token: $0)] } ?? []))
        let elements = ElementResolver(catalogue: dependencies.catalogue)
        let images = ImagesController(
            elements: elements, builder: configuration.builder, pipeline: dependencies.pipeline, photos: dependencies.photos,
            metrics: dependencies.metrics, trace: dependencies.trace, maxAgeSeconds: configuration.maxAgeSeconds, signer: configuration.signer,
            variantRules: VariantRules(allowedWidths: configuration.allowedWidths, allowedQualities: configuration.allowedQualities,
                                       presets: configuration.presets.mapValues { QueryItems($0) }, onlyPresets: configuration.onlyPresets),
            negotiation: FormatNegotiation(avif: configuration.autoAVIF, webp: true), clientHints: configuration.clientHints,
            logger: dependencies.logger)
        let router = Router(context: BasicRequestContext.self, options: ImageRoute.routerOptions)
        chain.add(to: router)
        let routes = AllowedMethods(router)
        let placeholders = ElementPlaceholders(pipeline: dependencies.pipeline, builder: configuration.builder, logger: dependencies.logger)
        routes.addRoutes(ElementsController(catalogue: dependencies.catalogue, elements: elements, photos: dependencies.photos,
                                            publicURL: configuration.publicURL, trustsProxies: !configuration.trustedProxies.isEmpty,
                                            placeholders: configuration.elementPlaceholders ? placeholders : nil).routes)
        routes.addRoutes(images.routes)
        routes.addRoutes(FavoritesController(store: dependencies.favorites, catalogue: dependencies.catalogue).routes)
        routes.addRoutes(OperationsController(pipeline: dependencies.pipeline, metrics: dependencies.metrics, favorites: dependencies.favorites).routes)
        routes.addRoutes(dependencies.web.routes(clientHints: configuration.clientHints))
        if !configuration.allowedSources.isEmpty {  // imgproxy's and thumbor's URLs
            var openSources = OpenSourcesController(
                pipeline: dependencies.pipeline, allowedSources: configuration.allowedSources,
                addresses: configuration.allowsPrivateSources ? .any : .publicOnly, signer: configuration.signer,
                negotiation: FormatNegotiation(avif: configuration.autoAVIF, webp: configuration.autoWebP), presets: ImgproxyPath.presets(configuration.presets.mapValues { QueryItems($0) }),
                thumborKey: configuration.thumborKey, allowsUnsafeThumborURLs: configuration.allowsUnsafeThumborURLs, maxAgeSeconds: configuration.maxAgeSeconds, logger: dependencies.logger)
            openSources.clientHints = configuration.clientHints
            routes.addRoutes(openSources.routes)
        }
        routes.answerOtherMethods()
        self.router = router
        fastPath = CachedImageFastPath(images: images, chain: chain, serverName: serverName)
    }
}

/// The `Server` header's value.
let serverName = "TileCache/\(TileCacheVersion.string)"

/// The application `tilecache serve` runs: the router, plus a background prefetch when configured.
///
/// - Parameter onServerRunning: called with the bound port once the server listens (port 0 picks a free one).
public func buildApplication(_ configuration: ServiceConfiguration, logger: Logger,
                             onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> some ApplicationProtocol {
    try buildApplication(ServiceDependencies(configuration: configuration, logger: logger), logger: logger, onServerRunning: onServerRunning)
}

/// The application over already built dependencies (tests inspect them while it runs).
///
/// - Throws: `ServiceConfigurationError` naming the certificate or key file that cannot be used.
public func buildApplication(_ dependencies: ServiceDependencies, logger: Logger,
                             onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) throws -> some ApplicationProtocol {
    let configuration = dependencies.configuration
    var services = dependencies.services
    if configuration.prefetchAtStart { services.append(PrefetchService(dependencies: dependencies, logger: logger)) }
    let idleTimeout = TimeAmount.nanoseconds(configuration.idleTimeout.nanoseconds)
    let limits = configuration.connectionLimits
    let connections = OpenConnections(maximum: limits.maxConnections ?? ConnectionLimits.defaultMaximum(), metrics: dependencies.metrics)
    // Before Hummingbird's handling of each connection (or HTTP/2 stream): HTTP/1.0's close and CONNECT's refusal,
    // the connection limits, and (with --trusted-proxies) the removal of proxy headers from peers that are not trusted.
    // (An HTTP/2 stream of the fast path's HTTPS server gets the connection guard, and the proxy headers' filter only
    // when it goes to the router; the HTTP/1.0 handler's installer is HTTP/1's.)
    let connectionGuard: @Sendable () -> [any RemovableChannelHandler] = {
        [ConnectionGuard(connections: connections, limits: limits, logger: logger)]
    }
    let proxies: @Sendable () -> [any RemovableChannelHandler] = {
        configuration.trustedProxies.isEmpty ? [] : [ForwardedHeaders(proxies: configuration.trustedProxies)]
    }
    let streamGuards: @Sendable () -> [any RemovableChannelHandler] = { connectionGuard() + proxies() }
    let guards: @Sendable () -> [any RemovableChannelHandler] = { [HTTP10ConnectionClose.Installer(logger: logger)] + streamGuards() }
    let door = FrontDoor(dependencies)
    let fastPath = configuration.fastPath ? door.fastPath : nil
    let server: HTTPServerBuilder
    if let tls = configuration.tls, let fastPath {
        // HTTPS: HTTP/2 when the client offers h2 by ALPN, HTTP/1.1 otherwise; the fast path answers in both.
        server = try fastPath.https(tls: try tls.serverConfiguration(), http1: .init(additionalChannelHandlers: guards(), idleTimeout: idleTimeout),
                                    idleTimeout: configuration.idleTimeout, sendTimeout: limits.sendTimeout, metrics: dependencies.metrics,
                                    streamGuards: connectionGuard, routedStreamHandlers: proxies)
    } else if let tls = configuration.tls {
        // HTTPS without the fast path: Hummingbird's own server (its HTTP/1.1 connections and HTTP/2 streams share these
        // handlers).
        server = try .http2Upgrade(tlsConfiguration: try tls.serverConfiguration(),
                                   configuration: .init(idleTimeout: configuration.idleTimeout,
                                                        streamConfiguration: .init(additionalChannelHandlers: guards(), idleTimeout: idleTimeout)))
    } else if let fastPath {
        server = fastPath.http1(.init(additionalChannelHandlers: guards(), idleTimeout: idleTimeout))
    } else {
        server = .http1(configuration: .init(additionalChannelHandlers: guards(), idleTimeout: idleTimeout))
    }
    return Application(
        router: door.router,
        server: server,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: serverName),
        services: services,
        onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? configuration.port) },
        logger: logger)
}

/// Warms every catalogue image once at start, and the thumbnails' placeholders, in the background; stops early on
/// graceful shutdown.
struct PrefetchService: Service {
    let dependencies: ServiceDependencies
    let logger: Logger

    func run() async throws {
        let images = dependencies.configuration.builder.images(for: dependencies.catalogue.elements).filter { !$0.isKnownMissing }
        let alternatives = Dictionary(uniqueKeysWithValues: images.filter { !$0.alternativeURLs.isEmpty }.map { ($0.url, $0.alternativeURLs) })
        let run = await cancelWhenGracefulShutdown { await dependencies.pipeline.prefetch(images.map(\.url), alternatives: alternatives) }
        // The thumbnails' placeholders too: the element API's records carry them, and the first list would make them.
        if dependencies.configuration.elementPlaceholders {
            let placeholders = ElementPlaceholders(pipeline: dependencies.pipeline, builder: dependencies.configuration.builder, logger: logger)
            _ = await cancelWhenGracefulShutdown { await placeholders.thumbnails(of: dependencies.catalogue.elements) }
        }
        // What the prefetch learnt of photos decides `has_image` as the image routes' own loads do.
        let photos = Dictionary(uniqueKeysWithValues: images.filter { $0.kind == .full }.map { ($0.url, $0.element) })
        for result in run.results {
            if let element = photos[result.url] { dependencies.photos.note(element, after: result.error) }
        }
        logger.info("prefetch at start finished", metadata: [
            "requested": "\(run.report.requests)", "failed": "\(run.report.failed)",
            "seconds": "\(Double(run.duration.components.seconds) + Double(run.duration.components.attoseconds) / 1e18)"])
        try? await gracefulShutdown()
    }
}

extension TLSFiles {
    /// swift-nio-ssl's server configuration from the two PEM files.
    ///
    /// - Throws: `ServiceConfigurationError` naming the file and BoringSSL's reason.
    func serverConfiguration() throws(ServiceConfigurationError) -> TLSConfiguration {
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateChain)
        } catch {
            throw ServiceConfigurationError("--tls-cert \(certificateChain): not a readable PEM certificate chain (\(error))")
        }
        guard !chain.isEmpty else { throw ServiceConfigurationError("--tls-cert \(certificateChain): holds no certificate") }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: privateKey, format: .pem)
        } catch {
            throw ServiceConfigurationError("--tls-key \(privateKey): not a readable PEM private key (\(error))")
        }
        return .makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
    }
}

public import Catalogue
import ImageCore
public import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOConcurrencyHelpers

/// A real HTTP/1.1 server on loopback that plays both upstream image hosts, with injectable latency and faults.
///
/// Serves generated JPEG thumbnails at `/periodictable/Tiles/NNN/s7.JPG` and photos at
/// `/images-of-elements/<name>.jpg` (404 for 90 and up, as upstream; `caesium.jpg`, not `cesium.jpg`). Responses carry
/// ETag and Last-Modified and honour If-None-Match / If-Modified-Since. Tests, CI, benchmarks and the demo use it;
/// production code never knows it is talking to a test server. Thread-safety: every method may be called from any task.
public final class OriginServer: Sendable {
    /// How the server behaves.
    public struct Configuration: Sendable {
        /// Address to bind (loopback by default).
        public var host = "127.0.0.1"
        /// Port to bind; 0 picks a free one.
        public var port = 0
        /// Delay added before every response.
        public var latency: Duration = .zero
        /// Seed of the generated images.
        public var seed: UInt64 = 1
        /// Faults, first matching rule wins.
        public var faults: [FaultRule] = []
        /// `Cache-Control` max-age sent with images, in seconds.
        public var maxAgeSeconds = 86_400

        /// The defaults: loopback, any free port, no latency, no faults.
        public init() {}
    }

    /// The photo host's own spellings where they differ from the catalogue's.
    public static let photoSpellings = ["cesium": "caesium"]

    let configuration: Configuration
    let state: SharedOriginState
    let images: OriginImageStore
    private let channel: any Channel
    private let group: MultiThreadedEventLoopGroup
    private let serving: Task<Void, Never>
    private let executor: OriginExecutor

    /// The bound port.
    public let port: Int

    /// Binds and starts serving.
    public static func start(_ configuration: Configuration = Configuration(),
                             logger: Logger = Logger(label: "tilecache.origin")) async throws -> OriginServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .bind(host: configuration.host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
                    return try NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return OriginServer(configuration: configuration, server: server, group: group, logger: logger)
    }

    private init(configuration: Configuration, server: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer>, Never>,
                 group: MultiThreadedEventLoopGroup, logger: Logger) {
        self.configuration = configuration
        self.group = group
        channel = server.channel
        port = server.channel.localAddress?.port ?? configuration.port
        let state = SharedOriginState(OriginState(faults: configuration.faults))
        self.state = state
        let images = OriginImageStore(synthesizer: ImageSynthesizer(seed: configuration.seed))
        self.images = images
        let responder = OriginResponder(configuration: configuration, state: state, images: images, logger: logger)
        let executor = OriginExecutor(name: "tilecache-origin")
        self.executor = executor
        serving = Task(executorPreference: executor) {
            try? await server.executeThenClose { connections in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in connections {
                        state.withLock { $0.connectionsAccepted += 1 }
                        group.addTask(executorPreference: executor) { await responder.serve(connection) }
                    }
                }
            }
        }
    }

    /// `http://host:port`.
    public var baseURL: String { "http://" + URLAuthority.string(host: configuration.host, port: port) }
    /// The thumbnail base URL to give an `ImageURLBuilder`.
    public var tilesBase: String { baseURL + "/periodictable" }
    /// The photo base URL to give an `ImageURLBuilder`.
    public var imagesBase: String { baseURL + "/images-of-elements" }
    /// A URL builder pointing at this server.
    public var urlBuilder: ImageURLBuilder { ImageURLBuilder(tilesBase: tilesBase, imagesBase: imagesBase) }

    /// Counters since start (or the last reset).
    public var statistics: OriginStatistics { state.withLock { $0.statistics } }

    /// Zeroes the counters and the fail-first counts.
    public func resetStatistics() {
        state.withLock { state in
            state.requestCounts.removeAll()
            state.maxInFlight = state.inFlight
            state.connectionsAccepted = 0
        }
    }

    /// Replaces the fault rules (and restarts their fail-first counts).
    public func setFaults(_ faults: [FaultRule]) {
        state.withLock { state in
            state.faults = faults
            state.requestCounts.removeAll()
        }
    }

    /// The bytes the server serves at `path` when no fault applies (nil for a 404).
    public func body(forPath path: String) -> [UInt8]? { images.image(forPath: path)?.bytes }

    /// Renders every image now, so later timings measure the client, not the origin's image generation.
    ///
    /// The work runs on the origin's own thread, never on the cooperative pool the caller's code needs.
    public func prerender() async {
        let images = self.images
        await withTaskGroup(of: Void.self) { group in
            for element in ElementCatalogue.standard.elements {
                group.addTask(executorPreference: executor) {
                    _ = images.image(forPath: OriginImageStore.paths.thumbnailURL(for: element))
                    if !element.hasKnownMissingPhoto { _ = images.image(forPath: OriginImageStore.photoPath(of: element)) }
                }
            }
        }
    }

    /// Stops accepting, closes every connection and the event loop.
    public func shutdown() async {
        try? await channel.close()
        serving.cancel()
        _ = await serving.value
        executor.stop()
        try? await group.shutdownGracefully()
    }
}

/// What the origin counted.
public struct OriginStatistics: Sendable {
    /// Requests received, by path.
    public var requestsByPath: [String: Int]
    /// Requests being answered now.
    public var inFlight: Int
    /// The most requests answered at once.
    public var maxInFlight: Int
    /// TCP connections accepted.
    public var connectionsAccepted: Int
    /// User-Agent headers seen.
    public var userAgents: Set<String>

    /// All requests received.
    public var requests: Int { requestsByPath.values.reduce(0, +) }
}

/// The origin's mutable state, shared by the server and its connections.
final class SharedOriginState: Sendable {
    private let mutex: NIOLockedValueBox<OriginState>
    init(_ state: OriginState) { mutex = NIOLockedValueBox(state) }
    func withLock<T>(_ body: (inout OriginState) -> T) -> T { mutex.withLockedValue { body(&$0) } }
}

struct OriginState {
    var faults: [FaultRule]
    var requestCounts: [String: Int] = [:]
    var inFlight = 0
    var maxInFlight = 0
    var connectionsAccepted = 0
    var userAgents: Set<String> = []

    var statistics: OriginStatistics {
        OriginStatistics(requestsByPath: requestCounts, inFlight: inFlight, maxInFlight: maxInFlight,
                         connectionsAccepted: connectionsAccepted, userAgents: userAgents)
    }
}

import Foundation
import HTTPTypes
import HummingbirdTesting
import ImageCore
import NIOCore
import NIOPosix
import Testing
import TileCacheService
import TestSupport

/// Slow clients over real sockets (issue 31): a body sent a byte at a time and a client that never reads its answers
/// each held a connection for ever; a client that reads slowly must still get everything.
@Suite("slow clients", .timeLimit(.minutes(5)), .heavy)
struct SlowClientTests {
    /// Limits short enough for a test; the defaults are 30 s each.
    static func configure(_ configuration: inout ServiceConfiguration) {
        configuration.connectionLimits.bodyTimeout = TestTime.scaled(.seconds(1))
        configuration.connectionLimits.sendTimeout = TestTime.scaled(.seconds(1))
    }

    @Test("a request body trickling in a byte at a time is cut off at --body-timeout (it was still open after 70 s)")
    func slowBody() async throws {
        try await withService(try await .start(Self.configure), mode: .live) { client, dependencies in
            let channel = try await Self.connect(port: try #require(client.port))
            try await channel.writeAndFlush(ByteBuffer(string: "POST /api/v1/favorites HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                                                       + "Content-Length: 65000\r\n\r\n{"))
            let started = ContinuousClock.now
            // A byte every 100 ms: each is a parsed body part, so an idle timeout never fires.
            let trickle = Task {
                while channel.isActive {
                    try await channel.writeAndFlush(ByteBuffer(string: " "))
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            defer { trickle.cancel() }
            try await Self.closed(channel, within: .seconds(15), "the slow body's connection")
            #expect(ContinuousClock.now - started >= .seconds(1) * 0.9, "closed by the body timeout, not before")
            #expect(Self.closedCount(dependencies, reason: "body-timeout") == 1)
        }
    }

    @Test("a client that pipelines requests and reads none of the answers is closed at --send-timeout (it was open after 45 s)",
          arguments: [true, false])
    func nonReader(fastPath: Bool) async throws {
        try await withService(try await .start { Self.configure(&$0); $0.fastPath = fastPath }, mode: .live) { client, dependencies in
            #expect(try await client.execute(uri: "/iron.jpg", method: .get).status == .ok)  // in memory: the fast path's
            let before = Self.metric(dependencies, "tilecache_http_connections_open")
            let channel = try await Self.connect(port: try #require(client.port), reading: false)
            let (server, peer) = (try #require(client.port), try #require(channel.localAddress?.port))
            try await waitUntil("the service counts the connection", within: .seconds(5)) {
                Self.metric(dependencies, "tilecache_http_connections_open") == before + 1
            }
            for path in ["/iron.jpg", "/api/v1/elements"] {
                try await channel.writeAndFlush(ByteBuffer(string: String(repeating: "GET \(path) HTTP/1.1\r\nHost: t\r\n\r\n", count: 150)))
            }
            try await waitUntil("the server closes the connection that reads nothing", within: .seconds(15)) {
                Self.closedCount(dependencies, reason: "send-timeout") == 1
            }
            try await waitUntil("the connection is no longer open in the service", within: .seconds(5)) {
                Self.metric(dependencies, "tilecache_http_connections_open") == before
            }
            // Reset, not closed: a plain close left the server's socket in FIN-WAIT-1 holding the megabytes the client
            // had not taken, for as long as the client kept its end open.
            try await waitUntil("the kernel drops the server's end of the connection", within: .seconds(5)) {
                Self.serverSocketState(port: server, peer: peer) == nil
            }
            channel.close(promise: nil)  // (the kernel may have delivered the reset already)
            try await Self.closed(channel, within: .seconds(15), "the non-reader's connection")
        }
    }

    @Test("a client that reads slowly gets every answer, whole: each 64 KiB it takes restarts the send timeout")
    func slowReader() async throws {
        try await withService(try await .start(Self.configure), mode: .live) { client, dependencies in
            let collected = Collected()
            let channel = try await Self.connect(port: try #require(client.port), reading: false, into: collected)
            let count = 4
            try await channel.writeAndFlush(ByteBuffer(string: String(repeating: "GET /api/v1/elements HTTP/1.1\r\nHost: t\r\n\r\n", count: count)))
            // About 4 KiB every 20 ms (the receive buffer is 4 KiB): 200 KiB/s, 370 KiB in all, within 2 s.
            let reader = Task {
                while channel.isActive {
                    channel.read()
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            defer { reader.cancel() }
            try await waitUntil("every answer arrives", within: .seconds(30)) {
                collected.text.components(separatedBy: "HTTP/1.1 200 OK").count == count + 1 && collected.text.hasSuffix("]")
            }
            #expect(channel.isActive, "the slow reader's connection stays open")
            #expect(Self.closedCount(dependencies, reason: "send-timeout") == 0)
            try await channel.close()
        }
    }

    // MARK: helpers

    /// What a connection has received.
    final class Collected: Sendable {
        private let received = Locked("")
        var text: String { received.value }
        func append(_ bytes: ByteBuffer) { received.withLock { $0 += String(buffer: bytes) } }
    }

    final class Keeper: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let collected: Collected
        init(_ collected: Collected) { self.collected = collected }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) { collected.append(unwrapInboundIn(data)) }
    }

    /// A connection to the service with a 4 KiB receive buffer; with `reading: false`, it reads only when asked.
    static func connect(port: Int, reading: Bool = true, into collected: Collected = Collected()) async throws -> any Channel {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(ChannelOptions.autoRead, value: reading)
            .channelOption(ChannelOptions.socketOption(.so_rcvbuf), value: 4096)
            .channelInitializer { channel in channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Keeper(collected)) } }
            .connect(host: "127.0.0.1", port: port).get()
    }

    /// Waits until the server has closed `channel`; throws after `timeout` (scaled).
    static func closed(_ channel: any Channel, within timeout: Duration, _ what: String) async throws {
        try await Deadline.first(of: { try await channel.closeFuture.get() }, orThrow: { TestFailure("\(what) is still open after \(timeout)") },
                                 at: .now + TestTime.scaled(timeout), onExpiry: { channel.close(promise: nil) })
    }

    /// The TCP state (Linux's code: `01` established, `04` FIN-WAIT-1, ...) of the server's socket listening on
    /// `port` and connected to the client's `peer` port on loopback, from /proc/net/tcp and tcp6; nil when the kernel
    /// has none.
    static func serverSocketState(port: Int, peer: Int) -> String? {
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 3, let local = fields[1].split(separator: ":").last, let remote = fields[2].split(separator: ":").last,
                      Int(local, radix: 16) == port, Int(remote, radix: 16) == peer else { continue }
                return String(fields[3])
            }
        }
        return nil
    }

    /// `tilecache_http_connections_closed_total` for `reason`, from the service's own metrics.
    static func closedCount(_ dependencies: ServiceDependencies, reason: String) -> Int {
        metric(dependencies, "tilecache_http_connections_closed_total{reason=\"\(reason)\"}")
    }

    /// The value of the sample `name` (with its labels) in the service's metrics; 0 when absent.
    static func metric(_ dependencies: ServiceDependencies, _ name: String) -> Int {
        dependencies.metrics.render().split(separator: "\n").first { $0.hasPrefix(name + " ") }
            .flatMap { Double($0.dropFirst(name.count + 1)) }.map { Int($0) } ?? 0
    }
}

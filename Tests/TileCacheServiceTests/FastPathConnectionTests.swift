import Foundation
import Hummingbird
import ImageCore
import Logging
import NIOCore
import ServiceLifecycle
import Testing
import TestSupport
import TileCacheService

/// The HTTP/1 fast path answers right after NIO's request decoder, before Hummingbird's connection state handler and
/// the connection guard (issue 35), so it keeps what they kept from the requests they no longer see: the graceful
/// close, the guard's record of a busy connection, what follows an answer that closes the connection, a slow reader's
/// progress. Real sockets (SwiftNIO's client with a 4 KiB receive buffer, `SlowClientTests.connect`).
@Suite("Service: a connection the HTTP/1 fast path answers", .timeLimit(.minutes(5)), .heavy)
struct FastPathConnectionTests {
    static let thumbnail = "GET /api/v1/elements/26/thumbnail HTTP/1.1\r\nHost: t\r\n\r\n"

    /// A service run as `tilecache serve` runs it (a service group, so graceful shutdown can be asked for); `body` gets
    /// its port and the group.
    static func withRunningService(_ configure: @escaping @Sendable (inout ServiceConfiguration) -> Void,
                                   _ body: (Int, ServiceGroup, ServiceDependencies) async throws -> Void) async throws {
        let harness = try await ServiceHarness.start(configure)
        let dependencies = try harness.dependencies()
        try await dependencies.prepare()
        let port = AsyncStream.makeStream(of: Int.self)
        let app = try buildApplication(dependencies, logger: Logger(label: "test")) { port.continuation.yield($0) }
        let group = ServiceGroup(configuration: .init(services: [app], logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        do {
            var ports = port.stream.makeAsyncIterator()
            try await body(try #require(await ports.next()), group, dependencies)
            await group.triggerGracefulShutdown()
            try await Deadline.first(of: { try await running.value }, orThrow: { TestFailure("the service did not stop") },
                                     at: .now + TestTime.scaled(.seconds(20)), onExpiry: { running.cancel() })
        } catch {
            running.cancel()
            _ = await running.result
            await dependencies.close()
            await harness.stop()
            throw error
        }
        await dependencies.close()
        await harness.stop()
    }

    /// Sends `request` down `channel` and waits until `collected` holds `answers` whole answers in all.
    static func exchange(_ channel: any Channel, _ request: String, _ collected: SlowClientTests.Collected, answers: Int) async throws {
        try await channel.writeAndFlush(ByteBuffer(string: request))
        try await waitUntil("\(answers) answers", within: .seconds(20)) { Self.wholeAnswers(collected.text) == answers }
    }

    /// How many whole answers `text` holds (each with a `Content-Length`).
    static func wholeAnswers(_ text: String) -> Int {
        var rest = Substring(text)
        var count = 0
        while let head = rest.range(of: "\r\n\r\n") {
            let lines = rest[..<head.lowerBound].split(separator: "\r\n")
            guard let length = lines.first(where: { $0.lowercased().hasPrefix("content-length: ") }).flatMap({ Int($0.dropFirst(16)) }),
                  rest.utf8.count - rest[..<head.upperBound].utf8.count >= length else { break }
            rest = Substring(rest.utf8.dropFirst(rest[..<head.upperBound].utf8.count + length))
            count += 1
        }
        return count
    }

    static func fastPathAnswers(_ dependencies: ServiceDependencies) -> Int {
        SlowClientTests.metric(dependencies, "tilecache_http_fast_path_answers_total")
    }

    @Test("graceful shutdown closes a keep-alive connection the fast path answered at once, not at its idle timeout")
    func gracefulShutdown() async throws {
        try await Self.withRunningService({ $0.idleTimeout = .seconds(120) }) { port, group, dependencies in
            let collected = SlowClientTests.Collected()
            let channel = try await SlowClientTests.connect(port: port, into: collected)
            try await Self.exchange(channel, Self.thumbnail, collected, answers: 1)  // the router's: fetched
            try await Self.exchange(channel, Self.thumbnail, collected, answers: 2)  // the fast path's: in memory
            #expect(Self.fastPathAnswers(dependencies) == 1)
            // Closed by the shutdown (Hummingbird's state handler, which saw none of this connection's requests but the
            // first), not by the 120 s idle timeout.
            await group.triggerGracefulShutdown()
            try await SlowClientTests.closed(channel, within: .seconds(20), "the idle keep-alive connection")
        }
    }

    @Test("a connection busy with answers the fast path gives is not the one shed for a new connection: the one idle longest is")
    func shedding() async throws {
        try await Self.withRunningService({ $0.connectionLimits.maxConnections = 2 }) { port, _, dependencies in
            let (busyAnswers, idleAnswers) = (SlowClientTests.Collected(), SlowClientTests.Collected())
            let busy = try await SlowClientTests.connect(port: port, into: busyAnswers)
            try await Self.exchange(busy, Self.thumbnail, busyAnswers, answers: 1)  // the router's: the guard sees it
            let idle = try await SlowClientTests.connect(port: port, into: idleAnswers)
            try await waitUntil("both connections counted", within: .seconds(10)) {
                SlowClientTests.metric(dependencies, "tilecache_http_connections_open") == 2
            }
            // Answered before the guard, after the idle connection opened: the busy one was busy last.
            try await Self.exchange(busy, Self.thumbnail, busyAnswers, answers: 2)
            #expect(Self.fastPathAnswers(dependencies) == 1)
            let third = try await SlowClientTests.connect(port: port)
            try await SlowClientTests.closed(idle, within: .seconds(10), "the connection idle the longest")
            #expect(busy.isActive, "the busy connection stays open")
            try await Self.exchange(busy, Self.thumbnail, busyAnswers, answers: 3)
            #expect(SlowClientTests.closedCount(dependencies, reason: "shed") == 1)
            try await third.close()
            try await busy.close()
        }
    }

    @Test("nothing is answered on a connection after an answer that closes it: a request behind a refused one gets no answer")
    func nothingAfterClose() async throws {
        try await Self.withRunningService({ _ in }) { port, _, dependencies in
            let collected = SlowClientTests.Collected()
            let channel = try await SlowClientTests.connect(port: port, into: collected)
            try await Self.exchange(channel, Self.thumbnail, collected, answers: 1)
            try await Self.exchange(channel, Self.thumbnail, collected, answers: 2)
            #expect(Self.fastPathAnswers(dependencies) == 1)
            // A transfer coding other than chunked is refused (501) and the connection closed; the thumbnail behind it
            // is in memory, and must not be answered.
            try await channel.writeAndFlush(ByteBuffer(string: "GET /api/v1/elements/26/thumbnail HTTP/1.1\r\nHost: t\r\n"
                                                       + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n" + Self.thumbnail))
            try await SlowClientTests.closed(channel, within: .seconds(20), "the refused connection")
            let statuses = collected.text.components(separatedBy: "HTTP/1.1 ").dropFirst().map { $0.prefix(3) }
            #expect(statuses == ["200", "200", "501"])
            #expect(Self.fastPathAnswers(dependencies) == 1)
        }
    }
}

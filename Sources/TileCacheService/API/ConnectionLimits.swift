#if canImport(Glibc)
import Glibc
#endif
import HTTPTypes
import ImageCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTPTypes
import Synchronization

/// What one client connection may hold, and how many may be open at once (issue 31). Hummingbird's idle timeout
/// counts parsed HTTP parts only, so without these a client sending a body a byte every 5 s, or pipelining requests
/// and never reading the answers, held its connection (and the request's task and buffers) for ever, and 110 of them
/// under `ulimit -n 128` exhausted the descriptors: SwiftNIO then retries a failing `accept` in a busy loop (its
/// read stays pending, so the listening socket stays readable), one core spun and `/healthz` timed out.
public struct ConnectionLimits: Sendable, Equatable {
    /// Longest from a request's head to the end of its body; then the connection is closed. Bodies here are small
    /// (a favourite is at most 64 KiB), so this bounds the whole body, not the gap between reads as nginx's
    /// `client_body_timeout` does: a byte every 5 s passes any gap rule.
    public var bodyTimeout: Duration = .seconds(30)
    /// Longest an answer may wait for the client to take any of it; then the connection is closed. Answers are handed
    /// to the socket 64 KiB at a time and each piece taken restarts the wait, as nginx's `send_timeout` does, so a slow
    /// but reading client is never cut off; one that reads nothing is.
    public var sendTimeout: Duration = .seconds(30)
    /// Most client connections open at once. One more first closes the connection that has been idle (between
    /// requests, or not yet sending one), stalled (not reading its answer) or still sending its body the longest, as
    /// nginx reuses idle keep-alive connections when `worker_connections` run out; when every connection is busy
    /// answering, the new one is closed. Nil: the descriptor limit less `descriptorReserve` (see `defaultMaximum`).
    public var maxConnections: Int?

    /// Descriptors kept for everything but client connections (image downloads, the disk cache, the database, logs).
    public static let descriptorReserve = 64

    public init() {}

    /// The most client connections the descriptor limit leaves room for: `RLIMIT_NOFILE` less `descriptorReserve`,
    /// or half of it when that is small; at least 1.
    public static func defaultMaximum() -> Int {
        let limit = descriptorLimit()
        return max(1, limit > 2 * descriptorReserve ? limit - descriptorReserve : limit / 2)
    }

    /// The process's soft `RLIMIT_NOFILE`; 1024 (Linux's usual default) when it cannot be read.
    public static func descriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        return Int(clamping: limit.rlim_cur)  // RLIM_INFINITY is the largest value: clamped to Int.max
    }

    /// Raises the soft descriptor limit to the hard one, as Go's runtime and nginx's `worker_rlimit_nofile` do (Debian
    /// starts processes with 1,024 of a hard 524,288). Returns the soft limit in force afterwards.
    @discardableResult
    public static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return descriptorLimit() }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) != 0 {
                // Refused (a hard limit above what the kernel allows): the soft limit stays; connections are sized to it.
                return descriptorLimit()
            }
        }
        return descriptorLimit()
    }
}

/// The client connections open now, for shedding when there are too many (see `ConnectionLimits.maxConnections`).
/// Connections register and leave under a lock; their state (busy, or idle/stalled since when) is an atomic each
/// connection's own handler writes, read only when choosing one to close.
final class OpenConnections: Sendable {
    /// One open connection.
    final class Entry: Sendable {
        let channel: any Channel
        /// Uptime in nanoseconds since when the connection could be closed without cutting an answer short (idle,
        /// stalled or still sending its body), or `Int64.max` while it is being answered.
        let sheddableSince = Atomic<Int64>(Int64.max)
        /// Whether the connection is stalled (the client takes none of its answer): then it is closed with a reset.
        let stalled = Atomic<Bool>(false)

        init(channel: any Channel) { self.channel = channel }
    }

    let maximum: Int
    let metrics: ServiceMetrics
    private let entries = NIOLockedValueBox<[ObjectIdentifier: Entry]>([:])

    init(maximum: Int, metrics: ServiceMetrics) {
        self.maximum = maximum
        self.metrics = metrics
    }

    /// Registers `channel`; at the limit, first closes the connection sheddable the longest. Nil when every open
    /// connection is busy answering: the caller closes `channel`.
    func open(_ channel: any Channel, now: Int64) -> Entry? {
        let entry = Entry(channel: channel)
        entry.sheddableSince.store(now, ordering: .relaxed)
        let (admitted, shed): (Bool, Entry?) = entries.withLockedValue { entries in
            var shed: Entry?
            if entries.count >= maximum {
                var oldest = Int64.max
                for candidate in entries.values {
                    let since = candidate.sheddableSince.load(ordering: .relaxed)
                    if since < oldest { (oldest, shed) = (since, candidate) }
                }
                guard let victim = shed else { return (false, nil) }
                entries[ObjectIdentifier(victim)] = nil
            }
            entries[ObjectIdentifier(entry)] = entry
            return (true, shed)
        }
        if let shed {
            if shed.stalled.load(ordering: .relaxed) { Self.reset(shed.channel) } else { shed.channel.close(promise: nil) }
            metrics.connectionClosed(reason: "shed")
        }
        guard admitted else {
            metrics.connectionClosed(reason: "refused")
            return nil
        }
        metrics.connection(opened: true)
        return entry
    }

    /// Forgets a connection that has closed (shed ones were forgotten when chosen).
    func close(_ entry: Entry) {
        _ = entries.withLockedValue { $0.removeValue(forKey: ObjectIdentifier(entry)) }
        metrics.connection(opened: false)
    }

    var count: Int { entries.withLockedValue { $0.count } }

    /// Closes a client connection with a reset (`SO_LINGER` 0), as nginx's `reset_timedout_connection` does: a
    /// plain close leaves whatever the client has not taken in the kernel (up to the socket's send buffer, about
    /// 4 MB each here) for as long as the client keeps its end open at a zero window, counted by no limit of ours (30
    /// such clients held 116 MB in FIN-WAIT-1). A reset drops it with the socket.
    static func reset(_ channel: any Channel) {
        guard let socket = channel as? any SocketOptionProvider else {
            channel.close(promise: nil)
            return
        }
        socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    }
}

/// Enforces `ConnectionLimits` on one connection (or one HTTP/2 stream: timeouts only). Sits after the HTTP codec, so
/// it sees every request part read and every answer part written but the HTTP/1 fast path's, which tells it of each
/// answer (`answeredAhead`) and sends a large body in its pieces (`inPieces`).
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// Answers are handed to the socket in pieces of this size, so the send timeout can see progress.
    static let sendPiece = 64 * 1024

    private let connections: OpenConnections
    private let bodyTimeout: TimeAmount
    private let sendTimeout: TimeAmount
    private let logger: Logger
    private var entry: Entry?
    private var registered = false
    /// Requests read whose answer has not been written to its end.
    private var unanswered = 0
    private var idleSince: NIODeadline = .now()
    /// Since when the body of the request being read has been awaited.
    private var bodySince: NIODeadline?
    private var bodyTimer: Scheduled<Void>?
    /// Since when the channel has not been writable, and when the client last took part of an answer.
    private var stalledSince: NIODeadline?
    private var lastProgress: NIODeadline = .now()
    private var sendTimer: Scheduled<Void>?
    typealias Entry = OpenConnections.Entry

    init(connections: OpenConnections, limits: ConnectionLimits, logger: Logger) {
        self.connections = connections
        self.bodyTimeout = .nanoseconds(Int64(limits.bodyTimeout.nanoseconds))
        self.sendTimeout = .nanoseconds(Int64(limits.sendTimeout.nanoseconds))
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { register(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        register(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        leave()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        leave()
    }

    /// Counts a connection (an HTTP/2 stream, whose parent is a connection, not the listening socket, is not one).
    private func register(context: ChannelHandlerContext) {
        guard !registered else { return }
        registered = true
        guard context.channel.parent?.parent == nil else { return }
        idleSince = .now()
        entry = connections.open(context.channel, now: Int64(idleSince.uptimeNanoseconds))
        if entry == nil {
            logger.notice("connection refused: every one of the \(connections.maximum) connections allowed is being answered",
                          metadata: ["remote": "\(context.channel.remoteAddress?.description ?? "?")"])
            context.close(promise: nil)
        }
    }

    private func leave() {
        bodyTimer?.cancel()
        sendTimer?.cancel()
        (bodyTimer, sendTimer) = (nil, nil)
        if let entry { connections.close(entry) }
        entry = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            unanswered += 1
            if Self.hasBody(request) {
                let now = NIODeadline.now()
                bodySince = now
                bodyTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: now + bodyTimeout) { [self] in
                    close(context: context, reason: "body-timeout",
                          "closed: the request body did not arrive within \(bodyTimeout.seconds) s")
                }
            }
            updateSheddable()
        case .body:
            break
        case .end:
            if bodySince != nil {
                bodyTimer?.cancel()
                (bodyTimer, bodySince) = (nil, nil)
                updateSheddable()
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .body(let body) where body.readableBytes > Self.sendPiece:
            inPieces(body, context: context, promise: promise) { piece, promise in
                context.write(wrapOutboundOut(.body(piece)), promise: promise)
            }
        case .end:
            unanswered = max(0, unanswered - 1)
            if unanswered == 0 { idleSince = .now() }
            context.write(data, promise: promise)
            updateSheddable()
        default:
            context.write(data, promise: promise)
        }
    }

    /// Hands `body` to `write` in pieces of `sendPiece` bytes, each of which the client taking restarts the send
    /// timeout; the last piece with `promise`. (Also the HTTP/1 fast path's, which answers before this handler.)
    func inPieces(_ body: ByteBuffer, context: ChannelHandlerContext, promise: EventLoopPromise<Void>?,
                  _ write: (ByteBuffer, EventLoopPromise<Void>?) -> Void) {
        var body = body
        while body.readableBytes > Self.sendPiece {
            let piece = body.readSlice(length: Self.sendPiece)!
            let taken = context.eventLoop.makePromise(of: Void.self)
            taken.futureResult.assumeIsolated().whenSuccess { [self] in lastProgress = .now() }
            write(piece, taken)
        }
        write(body, promise)
    }

    /// A request the HTTP/1 fast path answered on this connection, which this handler did not see (that path sits
    /// before the HTTP codec): the connection was busy for the answer's writing only, and is idle from now, for
    /// shedding, unless a request passed on is unanswered.
    func answeredAhead() {
        guard unanswered == 0 else { return }
        idleSince = .now()
        updateSheddable()
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            sendTimer?.cancel()
            (sendTimer, stalledSince) = (nil, nil)
            lastProgress = .now()
        } else if stalledSince == nil {
            stalledSince = .now()
            lastProgress = .now()
            scheduleSendCheck(context: context)
        }
        updateSheddable()
        context.fireChannelWritabilityChanged()
    }

    /// Closes the connection when the client has taken nothing for `sendTimeout`; otherwise checks again then.
    private func scheduleSendCheck(context: ChannelHandlerContext) {
        sendTimer = context.eventLoop.assumeIsolated().scheduleTask(deadline: lastProgress + sendTimeout) { [self] in
            guard stalledSince != nil else { return }
            if NIODeadline.now() - lastProgress >= sendTimeout {
                close(context: context, reason: "send-timeout", reset: true, Self.sendTimeoutMessage(sendTimeout))
            } else {
                scheduleSendCheck(context: context)
            }
        }
    }

    /// Closes the connection (or HTTP/2 stream); with `reset`, a connection is reset so the kernel drops what the
    /// client has not taken (`OpenConnections.reset`). A stream is closed alone: its connection may be reading others.
    private func close(context: ChannelHandlerContext, reason: String, reset: Bool = false, _ message: Logger.Message) {
        Self.close(context: context, reason: reason, reset: reset && entry != nil, message, logger: logger, metrics: connections.metrics)
    }

    /// Closes the channel of `context` for `reason`, logged and counted: with `reset`, by a reset
    /// (`OpenConnections.reset`). (Also the HTTP/2 fast path's, for the answers it gives on the connection:
    /// `CachedImageFastPath.StreamAnswerer`.)
    static func close(context: ChannelHandlerContext, reason: String, reset: Bool, _ message: Logger.Message, logger: Logger,
                      metrics: ServiceMetrics) {
        logger.info(message, metadata: ["remote": "\(context.channel.remoteAddress?.description ?? "?")"])
        metrics.connectionClosed(reason: reason)
        if reset {
            OpenConnections.reset(context.channel)
        } else {
            context.close(promise: nil)
        }
    }

    /// What is logged when a connection is closed because its client took none of its answer for `timeout`.
    static func sendTimeoutMessage(_ timeout: TimeAmount) -> Logger.Message {
        "closed: the client took none of its answer for \(timeout.seconds) s"
    }

    /// Publishes since when the connection could be closed without cutting an answer short.
    private func updateSheddable() {
        guard let entry else { return }
        let since: NIODeadline? = stalledSince ?? bodySince ?? (unanswered == 0 ? idleSince : nil)
        entry.sheddableSince.store(since.map { Int64($0.uptimeNanoseconds) } ?? Int64.max, ordering: .relaxed)
        entry.stalled.store(stalledSince != nil, ordering: .relaxed)
    }

    /// Whether a request's head announces a body (a length above zero, or chunks).
    static func hasBody(_ request: HTTPRequest) -> Bool {
        if request.headerFields[.transferEncoding] != nil { return true }
        guard let length = request.headerFields[.contentLength] else { return false }
        return length != "0"
    }
}

private extension TimeAmount {
    /// Whole seconds, for messages.
    var seconds: Int64 { nanoseconds / 1_000_000_000 }
}

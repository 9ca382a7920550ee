import HTTPTypes
import Hummingbird
import HummingbirdCore
import ImageCore
import Logging
import NIOCore
import NIOHTTP2
import NIOHTTPTypes
import NIOHTTPTypesHTTP2
import NIOSSL

extension CachedImageFastPath {
    /// An HTTP/2 stream handed to the router: the async channel Hummingbird's `handleHTTP` reads and writes.
    typealias RoutedStream = NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>

    /// HTTPS with the fast path: TLS, then HTTP/2 or HTTP/1.1 by ALPN, as Hummingbird's `HTTP2UpgradeChannel` does,
    /// except that an HTTP/2 stream the fast path answers never becomes a task.
    ///
    /// Hummingbird's HTTP/2 server wraps every stream in an async channel and hands it to a task before any handler has
    /// seen its request: per request a task, an async channel and two thread hops, whatever answers it (issue 35: 0.26x
    /// nginx under h2load where swift-nio-http2 alone, one handler per stream, reaches 0.70x). Here a request the fast
    /// path can answer from its HEADERS frame is answered on the connection, before the stream multiplexer
    /// (`StreamAnswerer`): its stream never becomes a stream channel. Any other stream's pipeline is the HTTPTypes codec,
    /// `streamGuards` (the connection guard's timeouts) and `StreamHandler`, which answers on the event loop what the fast
    /// path can (a request whose end comes after its head). Anything else gets the rest of Hummingbird's stream pipeline then
    /// (`StreamQuiesceFilter`, `routedStreamHandlers`, its connection state handler with the idle timeout) and is wrapped
    /// in an async channel and handed to the connection's task, which runs Hummingbird's own `handleHTTP` on it (the
    /// router). The connection's lifetime (idle timeout, GOAWAY and close on graceful shutdown) is swift-nio-http2's
    /// `NIOHTTP2ServerConnectionManagementHandler`, with `ConnectionCloser` closing what it would leave open; it counts
    /// the open streams by the HTTP/2 handler's events, since the multiplexer is swift-nio-http2's separate one (its
    /// inline multiplexer has no place for a handler before it). HTTP/1.1 over TLS is the fast path's HTTP/1 channel.
    ///
    /// - Throws: NIOSSL's error when `tls` cannot make a context.
    func https(tls: TLSConfiguration, http1: HTTP1Channel.Configuration, idleTimeout: Duration, sendTimeout: Duration,
               metrics: ServiceMetrics, streamGuards: @escaping @Sendable () -> [any RemovableChannelHandler],
               routedStreamHandlers: @escaping @Sendable () -> [any RemovableChannelHandler]) throws -> HTTPServerBuilder {
        var tls = tls
        tls.applicationProtocols = NIOHTTP2SupportedALPNProtocols
        let context = try NIOSSLContext(configuration: tls)
        return .init { responder in
            SecureChannel(http1: Channel(responder: responder, configuration: http1, fastPath: self),
                          fastPath: self, context: context, idleTimeout: idleTimeout,
                          sendTimeout: .nanoseconds(Int64(sendTimeout.nanoseconds)), metrics: metrics, streamGuards: streamGuards,
                          routedStreamHandlers: routedStreamHandlers)
        }
    }

    /// One TLS connection: HTTP/1.1 or HTTP/2, as ALPN decides.
    struct SecureChannel: ServerChildChannel, HTTPChannelHandler {
        struct Value: ServerChildChannelValue {
            /// The HTTP/1.1 connection's async channel, or the HTTP/2 connection's streams for the router.
            let negotiated: EventLoopFuture<NIONegotiatedHTTPVersion<HTTP1Channel.Value, AsyncStream<RoutedStream>>>
            let channel: any NIOCore.Channel
        }

        let http1: Channel
        let fastPath: CachedImageFastPath
        let context: NIOSSLContext
        let idleTimeout: Duration
        let sendTimeout: TimeAmount
        let metrics: ServiceMetrics
        let streamGuards: @Sendable () -> [any RemovableChannelHandler]
        let routedStreamHandlers: @Sendable () -> [any RemovableChannelHandler]

        var responder: HTTPChannelHandler.Responder { http1.responder }

        func setup(channel: any NIOCore.Channel, logger: Logger) -> EventLoopFuture<Value> {
            do {
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
            return channel.configureHTTP2AsyncSecureUpgrade { channel in
                http1.setup(channel: channel, logger: logger)
            } http2ConnectionInitializer: { channel in
                channel.eventLoop.makeCompletedFuture { try http2(channel, logger: logger) }
            }
            .map { Value(negotiated: $0, channel: channel) }
        }

        /// Sets up an HTTP/2 connection; returns the streams its handlers hand to the router.
        private func http2(_ channel: any NIOCore.Channel, logger: Logger) throws -> AsyncStream<RoutedStream> {
            let (streams, handOff) = AsyncStream.makeStream(of: RoutedStream.self)
            let idle = TimeAmount.nanoseconds(idleTimeout.nanoseconds)
            // Idle: no open stream for the idle timeout. (Hummingbird's HTTP/2 server sets no age or grace limit either.)
            let manager = NIOHTTP2ServerConnectionManagementHandler(
                eventLoop: channel.eventLoop, configuration: .init(maxIdleTime: idle, maxAge: nil, maxGraceTime: nil, keepalive: nil))
            let pipeline = channel.pipeline.syncOperations
            let streamConfiguration = NIOHTTP2Handler.StreamConfiguration()
            // The HTTP/2 handler without its inline multiplexer, so that `StreamAnswerer` sees the frames first; the
            // multiplexer after it has the inline one's settings (swift-nio-http2's defaults, as before).
            try pipeline.addHandler(NIOHTTP2Handler(mode: .server, connectionConfiguration: .init(), streamConfiguration: streamConfiguration))
            try ConnectionCloser.add(manager, grace: idle, to: channel)
            try pipeline.addHandler(StreamAnswerer(fastPath: fastPath, sendTimeout: sendTimeout, metrics: metrics, logger: logger))
            let multiplexer = HTTP2StreamMultiplexer(
                mode: .server, channel: channel, targetWindowSize: streamConfiguration.targetWindowSize,
                outboundBufferSizeHighWatermark: streamConfiguration.outboundBufferSizeHighWatermark,
                outboundBufferSizeLowWatermark: streamConfiguration.outboundBufferSizeLowWatermark
            ) { stream in
                stream.eventLoop.makeCompletedFuture {
                    let pipeline = stream.pipeline.syncOperations
                    try pipeline.addHandler(HTTP2FramePayloadToHTTPServerCodec())
                    try pipeline.addHandlers(streamGuards())
                    try pipeline.addHandler(StreamHandler(fastPath: fastPath, handOff: handOff, idleTimeout: idle) {
                        [StreamQuiesceFilter()] + routedStreamHandlers() + [HTTPConnectionStateHandler(idleTimeout: idleTimeout, logger: logger)]
                    })
                }
            }
            try pipeline.addHandler(multiplexer)
            // The connection's task stops taking streams when the connection closes; when that task is gone (cancelled),
            // the connection goes with it, so no stream waits for a router that will never read it.
            handOff.onTermination = { _ in channel.close(promise: nil) }
            channel.closeFuture.whenComplete { _ in handOff.finish() }
            return streams
        }

        func handle(value: Value, logger: Logger) async {
            do {
                switch try await value.negotiated.get() {
                case .http1_1(let connection):
                    await http1.handle(value: connection, logger: logger)
                case .http2(let streams):
                    await withDiscardingTaskGroup { group in
                        for await stream in streams {
                            group.addTask { await handleHTTP(asyncChannel: stream, logger: logger) }
                        }
                    }
                }
            } catch {
                logger.debug("HTTPS connection ended before its protocol was negotiated", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Closes an HTTP/2 connection where swift-nio-http2's connection manager would leave it open. Sits between the
    /// HTTP/2 handler and the manager (so it sees the manager's frames), and:
    /// - starts the manager's idle timer: the manager starts it on `channelActive`, which a connection negotiated by
    ///   ALPN after its TLS handshake has already had, so a connection that never opened a stream was never idle;
    /// - bounds its graceful close: the manager sends a GOAWAY and a PING, and the last GOAWAY and the close only once
    ///   the client acknowledges the PING; a client that never does (a mute or stalled one) kept the connection, and a
    ///   graceful shutdown, open for good. From the first GOAWAY the client has `grace` to acknowledge it; once the last
    ///   GOAWAY goes out the manager closes the connection when its streams are answered;
    /// - closes the connection when the client has closed its side (Hummingbird's server allows half-closure, so NIOSSL
    ///   reports the client's FIN or `close_notify` as `inputClosed`) and on any error the HTTP/2 handler reports (a
    ///   connection error, for which it has sent a GOAWAY; a DoS limit reached; also one stream's protocol error, which
    ///   a browser does not make), as Hummingbird's manager does.
    final class ConnectionCloser: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTP2Frame
        typealias InboundOut = HTTP2Frame
        typealias OutboundIn = HTTP2Frame
        typealias OutboundOut = HTTP2Frame

        private let grace: TimeAmount
        private var deadline: Scheduled<Void>?

        init(grace: TimeAmount) { self.grace = grace }

        /// Adds it and the manager after it, and starts the manager's idle timer.
        static func add(_ manager: NIOHTTP2ServerConnectionManagementHandler, grace: TimeAmount, to channel: any NIOCore.Channel) throws {
            let closer = ConnectionCloser(grace: grace)
            try channel.pipeline.syncOperations.addHandler(closer)
            try channel.pipeline.syncOperations.addHandler(manager)
            if channel.isActive { try channel.pipeline.syncOperations.context(handler: closer).fireChannelActive() }
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            if case .goAway(let lastStreamID, _, _) = unwrapOutboundIn(data).payload {
                if lastStreamID == .maxID, deadline == nil {
                    deadline = context.eventLoop.assumeIsolated().scheduleTask(in: grace) { context.close(promise: nil) }
                } else if lastStreamID != .maxID {
                    deadline?.cancel()  // acknowledged: the manager closes once the streams are answered
                }
            }
            context.write(data, promise: promise)
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let event = event as? ChannelEvent, event == .inputClosed {
                context.close(promise: nil)
                return
            }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            deadline?.cancel()
            context.fireChannelInactive()
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            deadline?.cancel()
        }
    }

    /// First of the handlers a stream for the router gets: keeps a graceful shutdown's `ChannelShouldQuiesceEvent`,
    /// which the multiplexer passes to every stream, from Hummingbird's connection state handler, which would close the
    /// stream as soon as its answer is written: before the client's flow-control window has let all of it out, so the
    /// rest was dropped with an RST_STREAM (a photo larger than a 64 KiB window, cut at SIGTERM). The connection
    /// manager runs the graceful close for the whole connection; each stream ends with its answer. (A stream the fast
    /// path answers has no state handler: the event passes it by.)
    final class StreamQuiesceFilter: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if event is ChannelShouldQuiesceEvent { return }
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Last in an HTTP/2 stream's pipeline (one request): answers it on the event loop when the fast path can;
    /// otherwise adds the rest of Hummingbird's stream pipeline after it (`routedHandlers`: the quiesce filter, the
    /// proxy headers' filter, the connection state handler), wraps the stream in an async channel, hands that to the
    /// connection's task for the router, and passes the request's parts on to it.
    ///
    /// A stream answered here has no connection state handler, whose idle timeout closed a stream whose request never
    /// ended: a request whose end does not come in the read that brought its head (HEADERS without END_STREAM, the end
    /// left for a DATA frame that may never come) gets the same timeout here, from its last part read.
    final class StreamHandler: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart

        private let fastPath: CachedImageFastPath
        private let handOff: AsyncStream<RoutedStream>.Continuation
        private let idleTimeout: TimeAmount
        /// Made when an answer waits for its request's end past the read of its head.
        private var idle: IdleTimeout?
        private let routedHandlers: () -> [any ChannelHandler]
        /// The answer, from the request's head until its end.
        private var answer: FastAnswer?
        /// Whether the stream is the router's.
        private var routed = false

        init(fastPath: CachedImageFastPath, handOff: AsyncStream<RoutedStream>.Continuation, idleTimeout: TimeAmount,
             routedHandlers: @escaping () -> [any ChannelHandler]) {
            (self.fastPath, self.handOff, self.idleTimeout, self.routedHandlers) = (fastPath, handOff, idleTimeout, routedHandlers)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard !routed else { return context.fireChannelRead(data) }
            idle?.touch()
            switch unwrapInboundIn(data) {
            case .head(let request):
                if context.channel.isWritable, let answer = fastPath.answer(request) {
                    self.answer = answer
                    return
                }
                route(context: context)
                if routed { context.fireChannelRead(data) }
            case .body:
                break  // of a request being answered here (as on HTTP/1, a GET's body is not read)
            case .end:
                guard let answer else { return }
                self.answer = nil
                idle?.stop()
                answer.write(to: context)
            }
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            if answer != nil, idle?.isRunning != true {
                if idle == nil {
                    idle = IdleTimeout(idleTimeout)
                    idle?.exempt = { [unowned self] in answer == nil }
                }
                idle?.start(context: context)
            }
            context.fireChannelReadComplete()
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            idle?.stop()
        }

        /// Makes the stream the router's: Hummingbird's handlers and its async channel (after this one) to the
        /// connection's task.
        private func route(context: ChannelHandlerContext) {
            do {
                try context.pipeline.syncOperations.addHandlers(routedHandlers())
                let stream = try RoutedStream(wrappingChannelSynchronously: context.channel)
                if case .terminated = handOff.yield(stream) {
                    context.close(promise: nil)
                } else {
                    routed = true
                    // The async channel's writer starts out writable; if the stream is not, say so.
                    if !context.channel.isWritable { context.fireChannelWritabilityChanged() }
                }
            } catch {
                context.close(promise: nil)
            }
        }
    }
}

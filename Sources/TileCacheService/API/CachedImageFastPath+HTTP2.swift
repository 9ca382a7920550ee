import HTTPTypes
import Logging
import NIOCore
import NIOHPACK
import NIOHTTP2

extension CachedImageFastPath {
    /// On an HTTP/2 connection, between the connection's handlers (the HTTP/2 handler, `ConnectionCloser`, the connection
    /// manager) and the stream multiplexer: answers from its HEADERS frame a request the fast path can answer, so that
    /// such a stream never becomes a stream channel (issue 35: a stream channel per request, with its pipeline set up and
    /// taken down, kept swift-nio-http2's own floor at 0.70x nginx under h2load, and the service at 0.53x). Every other
    /// frame passes on to the multiplexer, whose stream channels (`StreamHandler` last) answer the rest as before.
    ///
    /// It answers a request whose HEADERS frame opens a stream and ends it (a request with a body, or whose end comes in
    /// a DATA frame, goes to a stream channel), that converts to `HTTPRequest` as the stream's HTTPTypes codec converts
    /// it (`HTTPRequest(fastPathHeaders:)`, nil for anything unusual: the codec then judges it), and only while the
    /// connection can take more writes. The answer is a HEADERS frame and its body's DATA frames, the last ending the
    /// stream (the codec's answer ends with an empty DATA frame); the HTTP/2 handler keeps what the client's flow-control
    /// windows do not let out yet. The frames the client sends on such a stream afterwards (WINDOW_UPDATE for the rest of
    /// a large answer, RST_STREAM) end here until the stream closes: the multiplexer, which knows no such stream, would
    /// fire an error for each (`noSuchStream`, which no handler after it reads).
    ///
    /// The send timeout holds for these answers as `ConnectionGuard` holds it for a stream's: a body goes in pieces of
    /// `ConnectionGuard.sendPiece` bytes, and when answers written here wait and the client has taken none of them for
    /// the limits' send timeout, the connection is reset (a client that opens streams and grants no window, or reads
    /// nothing, would otherwise hold it for good: the connection manager's idle timer waits for open streams).
    final class StreamAnswerer: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = HTTP2Frame
        typealias InboundOut = HTTP2Frame
        typealias OutboundOut = HTTP2Frame

        private let fastPath: CachedImageFastPath
        private let sendTimeout: TimeAmount
        private let metrics: ServiceMetrics
        private let logger: Logger
        /// Streams answered here that have not closed yet: their frames end here.
        private var answering: Set<HTTP2StreamID> = []
        /// The highest stream the client has opened: a HEADERS frame above it opens one (a lower one is a trailer).
        private var lastOpened = HTTP2StreamID.rootStream
        /// Bytes of answers written and not flushed (each head counted as `Handler.headAllowance`), as on HTTP/1.
        private var unflushedBytes = 0
        /// DATA frames written here that the socket has not taken, and how many it has taken so far.
        private var waiting = 0
        private var taken = 0
        private var sendTimer: Scheduled<Void>?

        init(fastPath: CachedImageFastPath, sendTimeout: TimeAmount, metrics: ServiceMetrics, logger: Logger) {
            (self.fastPath, self.sendTimeout, self.metrics, self.logger) = (fastPath, sendTimeout, metrics, logger)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            let stream = frame.streamID
            guard stream != .rootStream else { return context.fireChannelRead(data) }
            if !answering.isEmpty, answering.contains(stream) { return }
            guard stream > lastOpened, case .headers(let headers) = frame.payload else { return context.fireChannelRead(data) }
            lastOpened = stream
            if headers.endStream, let answer = answer(headers.headers, context: context) {
                write(answer, on: stream, context: context)
                return
            }
            context.fireChannelRead(data)
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            if unflushedBytes > 0 {
                unflushedBytes = 0
                context.flush()
            }
            // (Also after a flush earlier in the read: `flushAfterBytes`.)
            if waiting > 0, sendTimer == nil { scheduleSendCheck(context: context, taken: taken) }
            context.fireChannelReadComplete()
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if !answering.isEmpty, let closed = event as? StreamClosedEvent { answering.remove(closed.streamID) }
            context.fireUserInboundEventTriggered(event)
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            sendTimer?.cancel()
            sendTimer = nil
        }

        /// The fast path's answer to a request with `headers`, or nil when a stream channel answers it.
        private func answer(_ headers: HPACKHeaders, context: ChannelHandlerContext) -> FastAnswer? {
            if unflushedBytes >= Handler.flushAfterBytes || (unflushedBytes > 0 && !context.channel.isWritable) {
                // Answers waiting for the read's end go first, so that the channel's writability says what the client
                // has not taken (as on HTTP/1: `Handler.flushAfterBytes`).
                unflushedBytes = 0
                context.flush()
            }
            guard context.channel.isWritable, let request = HTTPRequest(fastPathHeaders: headers) else { return nil }
            return fastPath.answer(request)
        }

        /// Writes `answer` on `stream`: its head, then its body in pieces, the last ending the stream.
        private func write(_ answer: FastAnswer, on stream: HTTP2StreamID, context: ChannelHandlerContext) {
            answering.insert(stream)  // before the writes: the stream may close as its end is written
            let head = HPACKHeaders(fastAnswer: answer)
            guard var body = answer.body else {
                context.write(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .headers(.init(headers: head, endStream: true)))),
                              promise: nil)
                unflushedBytes += Handler.headAllowance
                return
            }
            context.write(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .headers(.init(headers: head)))), promise: nil)
            unflushedBytes += Handler.headAllowance + body.readableBytes
            repeat {
                let piece = body.readSlice(length: min(body.readableBytes, ConnectionGuard.sendPiece))!
                let written = context.eventLoop.makePromise(of: Void.self)
                waiting += 1
                written.futureResult.assumeIsolated().whenComplete { [self] _ in
                    waiting -= 1
                    taken &+= 1
                }
                let data = HTTP2Frame.FramePayload.Data(data: .byteBuffer(piece), endStream: body.readableBytes == 0)
                context.write(wrapOutboundOut(HTTP2Frame(streamID: stream, payload: .data(data))), promise: written)
            } while body.readableBytes > 0
        }

        /// Resets the connection when answers written here still wait and the client has taken none of them since
        /// `taken` (`ConnectionGuard`'s send timeout); otherwise checks again a send timeout later while any wait.
        private func scheduleSendCheck(context: ChannelHandlerContext, taken before: Int) {
            sendTimer = context.eventLoop.assumeIsolated().scheduleTask(in: sendTimeout) { [self] in
                sendTimer = nil
                guard waiting > 0 else { return }
                if taken != before { return scheduleSendCheck(context: context, taken: taken) }
                ConnectionGuard.close(context: context, reason: "send-timeout", reset: true, ConnectionGuard.sendTimeoutMessage(sendTimeout),
                                      logger: logger, metrics: metrics)
            }
        }
    }
}

extension HTTPRequest {
    /// The request a HEADERS frame's `headers` carry, as swift-nio-extras' `HTTP2FramePayloadToHTTPServerCodec` converts
    /// it (the pseudo-header fields first, each field's indexing kept, a field whose name HTTPTypes rejects dropped), for
    /// a request with `:method`, `:scheme` and `:path` once each, `:authority` at most once and no other pseudo-header
    /// field (no `:protocol`: an extended CONNECT is the stream channel's); nil otherwise, where the codec would throw
    /// or the request is not one the fast path answers. (The HTTP/2 handler has already checked the block: pseudo-header
    /// fields first, names in lower case, no connection-specific field.)
    init?(fastPathHeaders hpack: HPACKHeaders) {
        var method: (String, HPACKIndexing)?
        var scheme: (String, HPACKIndexing)?
        var authority: (String, HPACKIndexing)?
        var path: (String, HPACKIndexing)?
        var index = hpack.startIndex
        while index != hpack.endIndex {
            let (name, value, indexing) = hpack[index]
            guard name.utf8.first == UInt8(ascii: ":") else { break }
            switch name {
            case ":method" where method == nil: method = (value, indexing)
            case ":scheme" where scheme == nil: scheme = (value, indexing)
            case ":authority" where authority == nil: authority = (value, indexing)
            case ":path" where path == nil: path = (value, indexing)
            default: return nil
            }
            index = hpack.index(after: index)
        }
        guard let method, let scheme, let path, let parsed = HTTPRequest.Method(method.0) else { return nil }
        self.init(method: parsed, scheme: scheme.0, authority: authority?.0, path: path.0)
        pseudoHeaderFields.method.indexingStrategy = .init(method.1)
        pseudoHeaderFields.scheme?.indexingStrategy = .init(scheme.1)
        if let authority { pseudoHeaderFields.authority?.indexingStrategy = .init(authority.1) }
        pseudoHeaderFields.path?.indexingStrategy = .init(path.1)
        headerFields.reserveCapacity(hpack.count)
        while index != hpack.endIndex {
            let (name, value, indexing) = hpack[index]
            guard name.utf8.first != UInt8(ascii: ":") else { return nil }
            if let fieldName = HTTPField.Name(name) {
                var field = HTTPField(name: fieldName, value: value)
                field.indexingStrategy = .init(indexing)
                headerFields.append(field)
            }
            index = hpack.index(after: index)
        }
    }
}

extension HPACKHeaders {
    /// `answer`'s whole head as the stream's HTTPTypes codec writes it in a HEADERS frame: `:status`, then every field
    /// by its canonical (lower-case) name, each with its indexing (`X-Request-ID` is never indexed: it is new in every
    /// answer).
    init(fastAnswer answer: FastAnswer) {
        self.init()
        reserveCapacity(answer.head.headerFields.count + answer.ownFields.count + 1)
        add(answer.head.pseudoHeaderFields.status)
        for field in answer.head.headerFields { add(field) }
        for field in answer.ownFields { add(field) }
    }

    private mutating func add(_ field: HTTPField) {
        add(name: field.name.canonicalName, value: field.value, indexing: HPACKIndexing(field.indexingStrategy))
    }
}

extension HPACKIndexing {
    /// As swift-nio-extras' HTTP/2 codec maps HTTPTypes' strategy.
    init(_ strategy: HTTPField.DynamicTableIndexingStrategy) {
        switch strategy {
        case .avoid: self = .nonIndexable
        case .disallow: self = .neverIndexed
        default: self = .indexable
        }
    }
}

extension HTTPField.DynamicTableIndexingStrategy {
    /// As swift-nio-extras' HTTP/2 codec maps HPACK's indexing.
    init(_ indexing: HPACKIndexing) {
        switch indexing {
        case .indexable: self = .automatic
        case .nonIndexable: self = .avoid
        case .neverIndexed: self = .disallow
        }
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import ImageCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Answers a request for an image the memory tier holds on the connection's event loop, without handing it to a task
/// and the router (issue 19: that hand-off and the router cap a minimal Hummingbird route at 0.35x to 0.7x nginx's
/// requests per second on 2 cores, depending on the host; a SwiftNIO handler reaches 0.65x to 1.08x).
///
/// It is the router's answer by construction, not by a copy: the path is matched against the image routes' own table
/// (`ImageRoute.all`, in Hummingbird's route trie), the answer is the route's own fast case (`ImagesController
/// .cachedAnswer`), and it passes through the same middleware chain as the router's (`ServiceMiddlewareChain`, whose
/// every middleware has a fast-path half). Hummingbird's `Date` and `Server` headers are added as Hummingbird adds them.
/// Anything else (a miss, a load, an error, a `Connection` header, another method or route) goes to the router
/// untouched; the reading of a miss goes with it (`ParsedImageRequests`).
struct CachedImageFastPath: Sendable {
    let images: ImagesController
    let chain: ServiceMiddlewareChain
    /// `Server`.
    let server: HTTPField
    /// Formats `Date` once a second.
    let date = DateHeader()

    init(images: ImagesController, chain: ServiceMiddlewareChain, serverName: String) {
        (self.images, self.chain, server) = (images, chain, HTTPField(name: .server, value: serverName))
    }

    /// The answer to `request` (no body for HEAD and 304), or nil when the router must answer it.
    func answer(_ request: HTTPRequest) -> FastAnswer? {
        // Hummingbird closes the connection after a request with `Connection: close`; such requests (and upgrades) are
        // its to answer. Browsers send `Connection: keep-alive`, which changes nothing.
        guard request.method == .get || request.method == .head,
              request.headerFields[values: .connection].allSatisfy({ $0.lowercased() == "keep-alive" }),
              let target = request.path else { return nil }
        let answered: FastAnswer?
        // (The middleware's fast-path halves pass the request on unchanged: its headers are read before them here.)
        let readingKey = images.readingKey(request.headerFields)
        if let prepared = images.preparedAnswer(target: target, headers: request.headerFields, readingKey: readingKey) {
            answered = chain.fastPath(FastRequest(head: request, route: prepared.route.route.template)) { request in
                guard var answer = images.cachedAnswer(prepared, target: target, readingKey: readingKey) else { return nil }
                decorate(&answer, for: request, target: target, readingKey: readingKey)
                return answer
            }
        } else {
            let uri = URI(target)
            guard let route = images.imageRoute(uri.path) else { return nil }
            answered = chain.fastPath(FastRequest(head: request, route: route.route.template)) { request in
                guard var answer = images.cachedAnswer(uri, headers: request.head.headerFields, readingKey: readingKey, route: route)
                else { return nil }
                decorate(&answer, for: request, target: target, readingKey: readingKey)
                return answer
            }
        }
        guard var answer = answered else { return nil }
        // No image answer has either before this; they follow the request ID, as Hummingbird adds them.
        answer.ownFields.append(date.now())
        answer.ownFields.append(server)
        if request.method == .head { answer.body = nil }
        return answer
    }

    /// Gives `answer` every middleware's decoration for `request`: the decorated head its remembered answer keeps for
    /// the request's decoration key, else one made now (and kept, when the answer is a remembered one's). Decorating
    /// the head for every answer, and copying it to do so, made a cached thumbnail's request 84,021 instructions against
    /// 77,309 now (callgrind, keep-alive requests; docs/benchmarks.md, issue 35's tenth session).
    private func decorate(_ answer: inout FastAnswer, for request: FastRequest, target: String, readingKey: String?) {
        let key = chain.decorationKey(request)
        if let kept = answer.prepared?.decoratedHead(key: key) {
            answer.head = kept.head
            answer.encodedHead = kept.http1
            return
        }
        chain.decorate(&answer.head, for: request)
        if let prepared = answer.prepared {
            let decorated = prepared.decorated(answer.head, for: key)
            images.preparedAnswers.keep(decorated, for: prepared, target: target, readingKey: readingKey)
            answer.encodedHead = decorated.decorated?.http1
        }
    }

    /// The HTTP/1 server with the fast path: Hummingbird's own `HTTP1Channel`'s pipeline, with a head reader before
    /// NIO's request decoder (`HeadReader`: requests in a strict subset of the syntax go to the fast path without the
    /// decoder), and NIO's response encoder replaced by the fast path's handler, right after NIO's request decoder,
    /// before everything else (the HTTP/1.0 and refusal handlers, the HTTPTypes codec, the connection guards,
    /// Hummingbird's connection state handler and its async channel). It encodes every answer on the connection
    /// (`HTTP1ResponseEncoder`, NIO's encoder's bytes), and an answer it gives itself crosses no other handler. So it also
    /// keeps what those handlers kept from the requests they no longer see: the idle timeout (Hummingbird's state
    /// handler gets none), and the connection guard's record of when the connection was last busy and of an answer's
    /// progress (`ConnectionGuard.answeredAhead`, `inPieces`).
    func http1(_ configuration: HTTP1Channel.Configuration) -> HTTPServerBuilder {
        .init { responder in Channel(responder: responder, configuration: configuration, fastPath: self) }
    }

    /// `HTTP1Channel` with the fast path's handler in place of NIO's response encoder.
    struct Channel: ServerChildChannel, HTTPChannelHandler {
        let base: HTTP1Channel
        let configuration: HTTP1Channel.Configuration
        let fastPath: CachedImageFastPath

        init(responder: @escaping HTTPChannelHandler.Responder, configuration: HTTP1Channel.Configuration, fastPath: CachedImageFastPath) {
            (base, self.configuration, self.fastPath) = (HTTP1Channel(responder: responder, configuration: configuration), configuration, fastPath)
        }

        var responder: HTTPChannelHandler.Responder { base.responder }

        /// `HTTP1Channel.setup`'s pipeline (Hummingbird 2's: NIO's decoder with the configuration's limits, no pipelining
        /// assistance or error handler, the HTTPTypes codec, the additional handlers, the connection state handler, the
        /// async channel), with `Handler` for NIO's encoder, which `configureHTTPServerPipeline` pairs with the decoder
        /// (the decoder here is unpaired: the handler keeps the requests' methods), the idle timeout kept by `Handler`,
        /// and `HeadReader` before the decoder, which offers `Handler` the requests it reads itself.
        func setup(channel: any NIOCore.Channel, logger: Logger) -> EventLoopFuture<HTTP1Channel.Value> {
            channel.eventLoop.makeCompletedFuture {
                var limits = NIOHTTPDecoderLimitConfiguration()
                limits.maxHeaderFieldSize = configuration.httpDecoder.maxHeaderFieldSize
                limits.maxHeaderListSize = configuration.httpDecoder.maxHeaderListSize
                limits.maxHeaderFieldCount = configuration.httpDecoder.maxHeaderFieldCount
                let pipeline = channel.pipeline.syncOperations
                let decoder = ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes, limitConfiguration: limits))
                try pipeline.addHandler(decoder)
                try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                try pipeline.addHandlers(configuration.additionalChannelHandlers())
                try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: nil, logger: logger))
                let connectionGuard = try? pipeline.handler(type: ConnectionGuard.self)
                let handler = Handler(fastPath: fastPath, idleTimeout: configuration.idleTimeout, connectionGuard: connectionGuard)
                try pipeline.addHandler(handler, position: .after(decoder))
                let headLimits = HTTP1StrictHead.Limits(maxHeaderFieldSize: limits.maxHeaderFieldSize, maxHeaderListSize: limits.maxHeaderListSize,
                                                        maxHeaderFieldCount: limits.maxHeaderFieldCount)
                try pipeline.addHandler(HeadReader(answerer: handler, limits: headLimits), position: .before(decoder))
                return try NIOAsyncChannel(wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
            }
        }

        func handle(value: HTTP1Channel.Value, logger: Logger) async {
            await base.handle(value: value, logger: logger)
        }
    }

    /// Sits right after an HTTP/1 connection's request decoder (an HTTP/2 stream has `StreamHandler`): answers what
    /// `CachedImageFastPath` can and passes everything else on. Responses keep the order of requests: while a request
    /// passed on is unanswered, later ones are passed on too. While the connection cannot take more writes (a client
    /// that sends requests and does not read the answers), requests are passed on, so Hummingbird's backpressure holds
    /// them. A request with a body (`Content-Length`, `Transfer-Encoding`: `EarlyRefusal` judges those) or one that
    /// closes the connection (HTTP/1.0 without keep-alive, `Connection: close`) is passed on, and after an answer that
    /// closes the connection nothing more is answered here.
    ///
    /// It keeps the connection's idle timeout, as Hummingbird's `HTTPConnectionStateHandler` does but over every
    /// request: the connection is closed when nothing was read or answered for the idle timeout, unless an answer is
    /// being made (a request read whole and passed on). The graceful close stays that handler's: it closes the
    /// connection on `ChannelShouldQuiesceEvent` when no request it saw is in progress, else after the last answer; an
    /// answer given here is never in progress then (it is written as its request's end is read, and a request with no
    /// body has its head and end decoded from the same bytes), and none is given while a request passed on is.
    ///
    /// The requests `HeadReader` reads itself, before the decoder, it answers the same way (`answerAhead`); those it
    /// does not answer come to it from the decoder as the others do.
    ///
    /// Answers are flushed once per read (`channelReadComplete`), and a read of which nothing was passed on ends here.
    ///
    /// It is the connection's response encoder too: the answers to the requests passed on are encoded as NIO's encoder
    /// encodes them (`HTTP1ResponseEncoder`, framed by their requests' methods, which it keeps), and its own are written
    /// as bytes, their heads from those a remembered answer keeps (`FastAnswer.http1Head`).
    final class Handler: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias InboundOut = HTTPServerRequestPart
        typealias OutboundIn = HTTPServerResponsePart
        typealias OutboundOut = IOData

        private let fastPath: CachedImageFastPath
        /// Encodes the answers to the requests passed on (the router's, and the refusals'), which it records: it frames
        /// an answer to HEAD or CONNECT without a body.
        private var encoder = HTTP1ResponseEncoder()
        /// The connection's idle timeout, over every request (nil: none).
        private let idle: IdleTimeout?
        private let connectionGuard: ConnectionGuard?
        /// Requests passed on whose responses have not been written to the end.
        private var passedOn = 0
        /// Whether a request's head has been read and not its end.
        private var reading = false
        /// The answer to the request whose parts are being read, when this handler answers it.
        private var answer: FastAnswer?
        /// Set by a request or an answer that closes the connection: nothing more is answered here.
        private var closing = false
        /// Set when the fast path had no answer to a request `HeadReader` offered: the decoder's reading of it, which
        /// comes next, is passed on without asking again.
        private var declined = false
        /// The handler's context, for the answers to requests `HeadReader` offers (from `handlerAdded` to
        /// `handlerRemoved`, on the channel's event loop).
        private var context: ChannelHandlerContext?
        /// Whether a part was passed on since the last `channelReadComplete`, and the bytes of the answers written and
        /// not flushed since (each head counted as `headAllowance`).
        private var passedOnSinceReadComplete = false
        private var unflushedBytes = 0

        /// Answers are flushed at the end of a read, or before the next once this many bytes of them wait: a client that
        /// pipelines requests and reads no answer is stopped by the channel's writability (requests are then passed on,
        /// and Hummingbird's backpressure holds them), which counts flushed bytes only, and only those the socket did not
        /// take where a TLS handler keeps what is written until a flush (NIOSSL). Without the bound, one read of a few
        /// thousand pipelined requests over TLS was answered whole, in memory. NIO's default high watermark.
        static let flushAfterBytes = 64 * 1024
        /// What a head counts for in `unflushedBytes` (an image answer's head is about 500 bytes).
        static let headAllowance = 512

        init(fastPath: CachedImageFastPath, idleTimeout: TimeAmount?, connectionGuard: ConnectionGuard?) {
            (self.fastPath, self.connectionGuard) = (fastPath, connectionGuard)
            idle = idleTimeout.map(IdleTimeout.init)
            // While an answer is being made (a request read whole and passed on), the connection is not idle.
            idle?.exempt = { [unowned self] in !reading && passedOn > 0 }
        }

        func handlerAdded(context: ChannelHandlerContext) {
            self.context = context
            if context.channel.isActive { idle?.start(context: context) }
        }

        func channelActive(context: ChannelHandlerContext) {
            idle?.start(context: context)
            context.fireChannelActive()
        }

        func channelInactive(context: ChannelHandlerContext) {
            idle?.stop()
            context.fireChannelInactive()
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            self.context = nil
            idle?.stop()
        }

        /// Answers `request`, read by `HeadReader` before the decoder, when it would answer the decoder's reading of
        /// it (`channelRead`): nothing passed on is in progress, the connection takes writes and is not closing, and
        /// the fast path has the answer. Returns whether it did; if not, the decoder's reading of the request comes next.
        func answerAhead(_ request: HTTPRequest) -> Bool {
            guard let context else { return false }
            idle?.touch()
            flushIfWaiting(context: context)
            guard passedOn == 0, !closing, !reading, context.channel.isWritable else { return false }
            guard let answer = fastPath.answer(request) else {
                declined = true
                return false
            }
            write(answer, context: context)
            return true
        }

        /// Answers waiting for the read's end go first when enough of them wait, or when the connection takes no more
        /// writes, so that the channel's writability says what the client has not taken.
        private func flushIfWaiting(context: ChannelHandlerContext) {
            guard unflushedBytes >= Self.flushAfterBytes || (unflushedBytes > 0 && !context.channel.isWritable) else { return }
            unflushedBytes = 0
            context.flush()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            idle?.touch()
            switch unwrapInboundIn(data) {
            case .head(let head):
                reading = true
                flushIfWaiting(context: context)
                if head.closesConnection { closing = true }  // the last request the client may send on this connection
                if declined {
                    declined = false
                } else if passedOn == 0, !closing, context.channel.isWritable, let answer = answer(head) {
                    self.answer = answer
                    return
                }
                passedOn += 1
                encoder.record(head.method)
            case .body:
                break  // (the request of an answer given here has no body)
            case .end:
                reading = false
                if let answer {
                    self.answer = nil
                    write(answer, context: context)
                    return
                }
            }
            passedOnSinceReadComplete = true
            context.fireChannelRead(data)
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            if unflushedBytes > 0 {
                unflushedBytes = 0
                context.flush()
            }
            if passedOnSinceReadComplete {
                passedOnSinceReadComplete = false
                context.fireChannelReadComplete()
            }
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let allocator = context.channel.allocator
            switch unwrapOutboundIn(data) {
            case .head(let head):
                if !head.isKeepAlive { closing = true }  // an answer that closes the connection
                // (Hummingbird's 400 for a request it could not parse answers no request passed on: none is recorded.)
                encoder.write(head: head, allocator: allocator, promise: promise) { context.write(wrapOutboundOut($0), promise: $1) }
            case .body(let body):
                encoder.write(body: body, allocator: allocator, promise: promise) { context.write(wrapOutboundOut($0), promise: $1) }
            case .end(let trailers):
                passedOn = max(0, passedOn - 1)
                encoder.write(end: trailers, allocator: allocator, promise: promise) { context.write(wrapOutboundOut($0), promise: $1) }
                answered(context: context)
            }
        }

        /// The fast path's answer to a request with `head`, or nil when it is passed on.
        private func answer(_ head: HTTPRequestHead) -> FastAnswer? {
            guard head.method == .GET || head.method == .HEAD, !head.headers.contains(name: "content-length"),
                  !head.headers.contains(name: "transfer-encoding"), let request = Self.request(head) else { return nil }
            return fastPath.answer(request)
        }

        /// `head` as Hummingbird's HTTPTypes codec gives it to the router (`HTTPRequest(_:secure:splitCookie:)`, with
        /// `secure` false as `HTTP1Channel` has it). The conversion reads the target with Foundation's `URLComponents`
        /// to take the path out of an absolute URI (2% of the service's samples under `wrk`); a target that starts
        /// with `/` has no scheme, and the conversion keeps it as it is: such a target is not parsed here.
        static func request(_ head: HTTPRequestHead) -> HTTPRequest? {
            guard head.uri.utf8.first == UInt8(ascii: "/"), let method = try? HTTPRequest.Method(head.method) else {
                return try? HTTPRequest(head, secure: false, splitCookie: false)
            }
            return HTTPRequest(method: method, scheme: "http", authority: head.headers["Host"].first, path: head.uri,
                               headerFields: HTTPFields(head.headers, splitCookie: false))
        }

        /// Writes `answer` (flushed at the end of the read, or sooner: `flushAfterBytes`): its head's bytes, then its body
        /// (its `Content-Length` frames it).
        private func write(_ answer: FastAnswer, context: ChannelHandlerContext) {
            context.write(wrapOutboundOut(.byteBuffer(answer.http1Head(allocator: context.channel.allocator))), promise: nil)
            if let body = answer.body {
                if let connectionGuard {
                    connectionGuard.inPieces(body, context: context, promise: nil) { piece, promise in
                        context.write(wrapOutboundOut(.byteBuffer(piece)), promise: promise)
                    }
                } else {
                    context.write(wrapOutboundOut(.byteBuffer(body)), promise: nil)
                }
            }
            unflushedBytes += Self.headAllowance + (answer.body?.readableBytes ?? 0)
            connectionGuard?.answeredAhead()
            answered(context: context)
        }

        /// An answer has been written to its end: when it was the last in progress, the connection's idle time starts.
        private func answered(context: ChannelHandlerContext) {
            guard passedOn == 0, !reading else { return }
            idle?.start(context: context)
        }
    }
}

extension FastAnswer {
    /// Writes the answer's head, body and end from `context` (a handler whose outbound parts are `HTTPResponsePart`s)
    /// and flushes them.
    func write(to context: ChannelHandlerContext) {
        context.write(NIOAny(HTTPResponsePart.head(wholeHead)), promise: nil)
        if let body { context.write(NIOAny(HTTPResponsePart.body(body)), promise: nil) }
        context.writeAndFlush(NIOAny(HTTPResponsePart.end(nil)), promise: nil)
    }
}

/// The `Date` header, formatted once a second.
final class DateHeader: Sendable {
    private let cached = NIOLockedValueBox<(second: Int, field: HTTPField)>((-1, HTTPField(name: .date, value: "")))

    func now() -> HTTPField {
        let now = Date()
        let second = Int(now.timeIntervalSince1970)
        return cached.withLockedValue { cached in
            if cached.second != second { cached = (second, HTTPField(name: .date, value: HTTPDate.string(from: now))) }
            return cached.field
        }
    }
}

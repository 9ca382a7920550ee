import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import ImageCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTPTypes

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
            answered = chain.fastPath(FastRequest(head: request, route: prepared.route.route.template)) { _ in
                images.cachedAnswer(prepared, target: target, readingKey: readingKey)
            }
        } else {
            let uri = URI(target)
            guard let route = images.imageRoute(uri.path) else { return nil }
            answered = chain.fastPath(FastRequest(head: request, route: route.route.template)) { request in
                images.cachedAnswer(uri, headers: request.head.headerFields, readingKey: readingKey, route: route)
            }
        }
        guard var answer = answered else { return nil }
        // No image answer has either before this.
        answer.head.headerFields.append(date.now())
        answer.head.headerFields.append(server)
        if request.method == .head { answer.body = nil }
        return answer
    }

    /// The HTTP/1 server with the fast path: Hummingbird's own `HTTP1Channel`, with the fast path's handler added after
    /// Hummingbird's connection state handler (which sees every request and answer for the idle timeout and graceful
    /// close) and before the request reaches a task.
    func http1(_ configuration: HTTP1Channel.Configuration) -> HTTPServerBuilder {
        .init { responder in Channel(base: HTTP1Channel(responder: responder, configuration: configuration), fastPath: self) }
    }

    /// `HTTP1Channel` with the fast path's handler inserted into each connection's pipeline.
    struct Channel: ServerChildChannel, HTTPChannelHandler {
        let base: HTTP1Channel
        let fastPath: CachedImageFastPath

        var responder: HTTPChannelHandler.Responder { base.responder }

        func setup(channel: any NIOCore.Channel, logger: Logger) -> EventLoopFuture<HTTP1Channel.Value> {
            base.setup(channel: channel, logger: logger).flatMapThrowing { value in
                let state = try channel.pipeline.syncOperations.handler(type: HTTPConnectionStateHandler.self)
                try channel.pipeline.syncOperations.addHandler(Handler(fastPath: fastPath), position: .after(state))
                return value
            }
        }

        func handle(value: HTTP1Channel.Value, logger: Logger) async {
            await base.handle(value: value, logger: logger)
        }
    }

    /// Sits after an HTTP/1 connection's codec and Hummingbird's connection state handler (an HTTP/2 stream has
    /// `StreamHandler`): answers what `CachedImageFastPath` can and passes everything else on. Responses keep the order
    /// of requests: while a request passed on is unanswered, later ones are passed on too. While the connection cannot
    /// take more writes (a client that sends requests and does not read the answers), requests are passed on, so
    /// Hummingbird's backpressure holds them.
    final class Handler: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart
        typealias OutboundOut = HTTPResponsePart

        private let fastPath: CachedImageFastPath
        /// Requests passed on whose responses have not been written to the end.
        private var passedOn = 0
        /// The answer to the request whose parts are being read, when this handler answers it.
        private var answer: FastAnswer?

        init(fastPath: CachedImageFastPath) {
            self.fastPath = fastPath
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let request):
                if passedOn == 0, context.channel.isWritable, let answer = fastPath.answer(request) {
                    self.answer = answer
                    return
                }
                passedOn += 1
            case .body:
                if answer != nil { return }
            case .end:
                if let answer {
                    self.answer = nil
                    answer.write(to: context)
                    return
                }
            }
            context.fireChannelRead(data)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            // (Hummingbird's 400 for a request it could not parse answers no request passed on: never below zero.)
            if case .end = unwrapOutboundIn(data) { passedOn = max(0, passedOn - 1) }
            context.write(data, promise: promise)
        }
    }
}

extension FastAnswer {
    /// Writes the answer's head, body and end from `context` (a handler whose outbound parts are `HTTPResponsePart`s)
    /// and flushes them.
    func write(to context: ChannelHandlerContext) {
        context.write(NIOAny(HTTPResponsePart.head(head)), promise: nil)
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

import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import ImageCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTPTypes

/// Answers a request for an image the memory tier holds on the connection's event loop, before Hummingbird hands the
/// request to a task and the router (issue 19: that hand-off and the router cap a minimal Hummingbird route at 0.35x
/// to 0.7x nginx's requests per second on 2 cores, depending on the host; a SwiftNIO handler reaches 0.65x to 1.08x).
///
/// The answer is the one the router would give, made by the same code: the route's matching and checks and headers
/// (`ElementsController.imageRoute`, `cachedAnswer`), the request ID and request log line (`RequestLogMiddleware`),
/// the CORS headers (`CORSMiddleware`), the request metrics (`ServiceMetrics`), and the `Date` and `Server` headers
/// Hummingbird adds. Anything else (a miss, a load, an error, a `Connection` header, another method or route) goes to
/// the router untouched.
struct CachedImageFastPath: Sendable {
    let elements: ElementsController
    let metrics: ServiceMetrics
    let cors: CORSPolicy
    let logRequests: Bool
    let logger: Logger
    let serverName: String
    /// Formats `Date` once a second.
    let date = DateHeader()

    /// The response head and body (nil for HEAD and 304) for `request`, or nil when the router must answer it.
    func answer(_ request: HTTPRequest) -> (head: HTTPResponse, body: ByteBuffer?)? {
        // Hummingbird closes the connection after a request with `Connection: close`; such requests (and upgrades) are
        // its to answer. Browsers send `Connection: keep-alive`, which changes nothing.
        guard request.method == .get || request.method == .head,
              request.headerFields[values: .connection].allSatisfy({ $0.lowercased() == "keep-alive" }),
              let target = request.path else { return nil }
        let started = ContinuousClock.now
        let uri = URI(target)
        guard let (route, element, kind) = elements.imageRoute(uri.path),
              let answer = elements.cachedAnswer(uri, headers: request.headerFields, element: element, kind: kind) else { return nil }
        metrics.requestStarted()
        var response = answer.response
        CORSMiddleware<BasicRequestContext>.decorate(&response.headers, origin: request.headerFields[.origin], policy: cors)
        let id = RequestLogMiddleware<BasicRequestContext>.requestID(request.headerFields)
        response.headers[RequestLogMiddleware<BasicRequestContext>.header] = id
        let elapsed = ContinuousClock.now - started
        metrics.requestFinished(route: route, method: request.method.rawValue, status: Int(response.status.code), duration: elapsed)
        metrics.answeredByFastPath()
        if logRequests {
            var logger = logger
            logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
            logger[metadataKey: "request_id"] = .string(id)
            RequestLogMiddleware<BasicRequestContext>.log(request, status: response.status, headers: response.headers,
                                                          bytes: response.body.contentLength, elapsed: elapsed, logger: logger)
        }
        response.headers[.date] = date.now()
        response.headers[.server] = serverName
        return (response.head, request.method == .head ? nil : answer.body)
    }

    /// The channel handlers that put `answer` before Hummingbird's own handling of each connection: the connection's
    /// idle timeout and graceful close (Hummingbird's `HTTPConnectionStateHandler`, which must see every request and
    /// answer, so it goes before the fast path; give Hummingbird's own one no timeout), then the fast path.
    func handlers(idleTimeout: Duration?, logger: Logger) -> [any RemovableChannelHandler] {
        [HTTPConnectionStateHandler(idleTimeout: idleTimeout, logger: logger), Handler(fastPath: self)]
    }

    /// Sits after the HTTP/1 codec: answers what `CachedImageFastPath` can and passes everything else on. Responses
    /// keep the order of requests: while a request passed on is unanswered, later ones are passed on too. While the
    /// connection cannot take more writes (a client that sends requests and does not read the answers), requests are
    /// passed on, so Hummingbird's backpressure holds them.
    final class Handler: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPRequestPart
        typealias InboundOut = HTTPRequestPart
        typealias OutboundIn = HTTPResponsePart
        typealias OutboundOut = HTTPResponsePart

        private let fastPath: CachedImageFastPath
        /// Requests passed on whose responses have not been written to the end.
        private var passedOn = 0
        /// The answer to the request whose parts are being read, when this handler answers it.
        private var answer: (head: HTTPResponse, body: ByteBuffer?)?

        init(fastPath: CachedImageFastPath) { self.fastPath = fastPath }

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
                    context.write(wrapOutboundOut(.head(answer.head)), promise: nil)
                    if let body = answer.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
                    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
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

/// The `Date` header's value, formatted once a second.
final class DateHeader: Sendable {
    private let cached = NIOLockedValueBox<(second: Int, text: String)>((-1, ""))

    func now() -> String {
        let now = Date()
        let second = Int(now.timeIntervalSince1970)
        return cached.withLockedValue { cached in
            if cached.second != second { cached = (second, HTTPDate.string(from: now)) }
            return cached.text
        }
    }
}

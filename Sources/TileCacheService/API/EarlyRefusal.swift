import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1

/// Answers, and closes, the requests the service refuses from their head alone, before anything reads their body.
/// Placed right after NIO's request decoder (by `HTTP10ConnectionClose.Installer`), so such a request reaches nothing
/// after it:
///
/// - `CONNECT`: 405. NIO's decoder treats a CONNECT as the start of a tunnel (it stops parsing what follows, waiting
///   for an upgrade handler that never comes), so the router's 404 went out without `Content-Length` and the
///   connection stalled until the idle timeout. The answer has no body: the response encoder (NIO's, or the fast
///   path's `HTTP1ResponseEncoder`, which writes the same) frames every answer to a CONNECT without one (RFC 9112 6.3
///   says so of a 2xx); the close ends it.
/// - A `Transfer-Encoding` other than `chunked` alone (`gzip, chunked`): 501, as RFC 9112 6.1 asks of a coding the
///   server does not know; it was accepted and the gzip ignored.
/// - A `Content-Length` above `maxBodyBytes`: 413 at once, as nginx's `client_max_body_size` does. The route refused
///   such a body only once 64 KiB had arrived, and then Hummingbird read the rest before the next request, so
///   `Content-Length: 999999999999` held the connection until the body timeout.
final class EarlyRefusal: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// The largest request body any route takes (a favourite, `FavoriteBody.maxBytes`).
    static let maxBodyBytes = FavoriteBody.maxBytes

    /// Whether a request has been refused: nothing read after it is passed on.
    private var refused = false
    /// Requests passed on whose answer has not been written to its end: a refusal waits for them, so answers keep
    /// the order of pipelined requests.
    private var passedOn = 0
    private var waiting: Refusal?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }  // what follows a refused head is not read
        guard case .head(let head) = unwrapInboundIn(data) else {
            context.fireChannelRead(data)
            return
        }
        guard let refusal = Self.refusal(of: head) else {
            passedOn += 1
            context.fireChannelRead(data)
            return
        }
        refused = true
        if passedOn == 0 { answer(refusal, context: context) } else { waiting = refusal }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.write(data, promise: promise)
        guard case .end = unwrapOutboundIn(data) else { return }
        passedOn = max(0, passedOn - 1)
        if passedOn == 0, let refusal = waiting {
            waiting = nil
            answer(refusal, context: context)
        }
    }

    private func answer(_ refusal: Refusal, context: ChannelHandlerContext) {
        var headers: HTTPHeaders = ["Cache-Control": "no-store", "Connection": "close"]
        var body: ByteBuffer?
        switch refusal {
        case .connect:
            headers.add(name: "Allow", value: "GET, HEAD, POST, PUT, DELETE, OPTIONS")
        case .error(let error):
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let data = (try? encoder.encode(error.body)) ?? Data()
            body = ByteBuffer(bytes: data)
            headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
            headers.add(name: "Content-Length", value: String(data.count))
        }
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: refusal.status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let body { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in Self.lingeringClose(context) }
    }

    /// How long a refused connection's input is still read (and dropped) after the answer, at most.
    static let lingerTime = TimeAmount.seconds(2)

    /// Ends the answer with a FIN, then reads (and drops) what the client still sends for `lingerTime` before closing,
    /// as nginx's `lingering_close` does: closing with a body still arriving makes the kernel answer with a reset,
    /// which can destroy the answer before the client has read it.
    private static func lingeringClose(_ context: ChannelHandlerContext) {
        let closed = context.eventLoop.makePromise(of: Void.self)
        context.close(mode: .output, promise: closed)
        closed.futureResult.assumeIsolated().whenComplete { result in
            guard case .success = result else { return context.close(promise: nil) }
            context.eventLoop.assumeIsolated().scheduleTask(in: lingerTime) { context.close(promise: nil) }
        }
    }

    /// Why a request is refused from its head alone.
    enum Refusal: Equatable {
        /// 405, no body.
        case connect
        /// The error's status and JSON body.
        case error(ServiceError)

        var status: Int {
            switch self {
            case .connect: 405
            case .error(let error): Int(error.status.code)
            }
        }
    }

    /// Why a request with this head is refused; nil when it is not.
    static func refusal(of head: HTTPRequestHead) -> Refusal? {
        if head.method == .CONNECT { return .connect }
        let codings = head.headers[canonicalForm: "transfer-encoding"].map { $0.lowercased() }
        if !codings.isEmpty, codings != ["chunked"] {
            return .error(ServiceError(.notImplemented, reason: .unsupportedTransferCoding, message: """
                Transfer-Encoding '\(codings.joined(separator: ", ").prefix(100))' is not supported: send the body chunked, or with a Content-Length
                """))
        }
        if let length = head.headers.first(name: "content-length").flatMap({ UInt64($0) }), length > UInt64(maxBodyBytes) {
            return .error(ServiceError(.contentTooLarge, reason: .bodyTooLarge,
                                       message: "the request body is larger than \(maxBodyBytes) bytes (Content-Length: \(length))"))
        }
        return nil
    }
}

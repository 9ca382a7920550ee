import Logging
import NIOCore
import NIOHTTP1

/// HTTP/1.0 closes the connection after each answer unless the request asks to keep it alive, and any request whose
/// `Connection` field has the `close` option closes it, in any case and among other options (RFC 9112, 9.3 and 9.6;
/// RFC 9110, 7.6.1: connection options are case-insensitive). Hummingbird's HTTP/1 channel closes only when the
/// request's `Connection` is exactly `close`, and the HTTPTypes requests it handles carry no version, so an HTTP/1.0
/// client, and one that sent `Connection: Close`, was held open for the whole idle timeout (30 s) after its answer.
/// Placed right after NIO's request decoder, this handler gives every request that closes the connection
/// (`closesConnection`) exactly `Connection: close`, which everything after it honours (the fast path leaves it to the
/// router, and Hummingbird closes after the answer).
final class HTTP10ConnectionClose: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // (Compared as Hummingbird compares it: `Close` must become `close`.)
        guard case .head(var head) = unwrapInboundIn(data), head.closesConnection, head.headers["connection"] != ["close"] else {
            context.fireChannelRead(data)
            return
        }
        head.headers.replaceOrAdd(name: "Connection", value: "close")
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    /// Added with Hummingbird's additional channel handlers (which come after its HTTPTypes codec): it puts an
    /// `HTTP10ConnectionClose` and an `EarlyRefusal` after the request decoder, then removes itself. In an HTTP/2
    /// stream (whose parent is a connection, not the listening socket: Hummingbird's TLS server gives its HTTP/1.1
    /// connections and its HTTP/2 streams the same handlers) there is neither HTTP/1.0 nor CONNECT to handle: it only
    /// removes itself. (Until issue 35 it logged an error there, once for every HTTP/2 request.)
    final class Installer: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = Never
        let logger: Logger

        init(logger: Logger) { self.logger = logger }

        func handlerAdded(context: ChannelHandlerContext) {
            if context.channel.parent?.parent != nil {
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
                return
            }
            do {
                let decoder = try context.pipeline.syncOperations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
                let close = HTTP10ConnectionClose()
                try context.pipeline.syncOperations.addHandler(close, position: .after(decoder))
                try context.pipeline.syncOperations.addHandler(EarlyRefusal(), position: .after(close))
            } catch {
                logger.error("HTTP/1.0 connections will stay open after each answer, and CONNECT will stall: no HTTP/1 request decoder in the pipeline",
                             metadata: ["error": "\(error)"])
            }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}

extension HTTPRequestHead {
    /// Whether the connection closes after this request's answer: NIO's `isKeepAlive` (llhttp's reading: HTTP/1.1 unless
    /// a `close` option, HTTP/1.0 only with a `keep-alive` option), or, in HTTP/1.0, a `close` option beside
    /// `keep-alive`, which llhttp does not look for there and RFC 9112 (9.3) says wins.
    var closesConnection: Bool {
        !isKeepAlive || (version.major == 1 && version.minor == 0
                         && headers[canonicalForm: "connection"].contains { $0.utf8.count == 5 && $0.lowercased() == "close" })
    }
}

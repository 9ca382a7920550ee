import NIOCore
import NIOHTTP1

/// Answers `CONNECT` with 405 and closes the connection. NIO's request decoder treats a CONNECT as the start of a
/// tunnel (it stops parsing what follows, waiting for an upgrade handler that never comes), so the router's 404 went
/// out without `Content-Length` and the connection stalled until the idle timeout. Placed right after the decoder (by
/// `HTTP10ConnectionClose.Installer`), so the CONNECT reaches nothing after it. The answer has no body: NIO's encoder
/// frames every answer to a CONNECT without one (RFC 9112 6.3 says so of a 2xx); the close ends it.
final class ConnectRefusal: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }  // what follows a CONNECT is not HTTP
        guard case .head(let head) = unwrapInboundIn(data), head.method == .CONNECT else {
            context.fireChannelRead(data)
            return
        }
        refused = true
        let headers: HTTPHeaders = ["Allow": "GET, HEAD, POST, PUT, DELETE, OPTIONS", "Cache-Control": "no-store", "Connection": "close"]
        context.write(NIOAny(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .methodNotAllowed, headers: headers))), promise: nil)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}

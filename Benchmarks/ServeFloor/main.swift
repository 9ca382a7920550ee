// The floors under `tilecache serve` (issue 19): the same file's bytes answered by a minimal Hummingbird route and by a
// minimal SwiftNIO HTTP/1 server, so bench-compare's table shows what the framework costs and what our layers cost.
// Usage: ServeFloor hummingbird|nio PORT FILE   (prints "listening on PORT" once it accepts connections)
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOPosix

let arguments = CommandLine.arguments
guard arguments.count == 4, let port = Int(arguments[2]), let data = FileManager.default.contents(atPath: arguments[3]) else {
    FileHandle.standardError.write(Data("usage: ServeFloor hummingbird|nio PORT FILE\n".utf8))
    exit(64)
}
let body = ByteBuffer(bytes: data)

/// The line bench-compare waits for.
@Sendable func announce(_ port: Int) {
    FileHandle.standardOutput.write(Data("listening on \(port)\n".utf8))
}

switch arguments[1] {
case "hummingbird":
    // One route, fixed bytes: Hummingbird's HTTP/1 server and router with no middleware.
    let router = Router()
    router.get("/thumb.jpg") { _, _ in
        Response(status: .ok, headers: [.contentType: "image/jpeg"], body: .init(byteBuffer: body))
    }
    let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
                          onServerRunning: { channel in announce(channel.localAddress?.port ?? port) })
    try await app.runService()
case "nio":
    // SwiftNIO's HTTP/1 pipeline on one event loop per core, answering every request on the event loop.
    final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let body: ByteBuffer
        var keepAlive = true
        init(body: ByteBuffer) { self.body = body }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                keepAlive = head.isKeepAlive
            case .body:
                break
            case .end:
                var headers = HTTPHeaders()
                headers.add(name: "Content-Type", value: "image/jpeg")
                headers.add(name: "Content-Length", value: String(body.readableBytes))
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
                let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
                if !keepAlive {
                    let channel = context.channel
                    written.whenComplete { _ in channel.close(promise: nil) }
                }
            }
        }
    }
    let group = MultiThreadedEventLoopGroup.singleton
    let channel = try await ServerBootstrap(group: group)
        .serverChannelOption(.backlog, value: 256)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                try channel.pipeline.syncOperations.addHandler(Handler(body: body))
            }
        }
        .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        .childChannelOption(.maxMessagesPerRead, value: 16)
        .bind(host: "127.0.0.1", port: port).get()
    announce(channel.localAddress?.port ?? port)
    try await channel.closeFuture.get()
default:
    FileHandle.standardError.write(Data("ServeFloor: unknown kind '\(arguments[1])' (hummingbird or nio)\n".utf8))
    exit(64)
}

// The floors under `tilecache serve` (issue 19): the same file's bytes answered by a minimal Hummingbird route and by a
// minimal SwiftNIO HTTP/1 server, so bench-compare's table shows what the framework costs and what our layers cost; by a
// SwiftNIO channel with no HTTP codec (issue 35: what NIO's channel costs without llhttp and the HTTP/1 parts); and
// (issue 35) by a minimal SwiftNIO HTTP/2 server over TLS: swift-nio-http2's stream channel per request and the same
// handler, the floor under `serve --tls-cert` for h2load.
// Usage: ServeFloor hummingbird|nio|nio-raw PORT FILE
//        ServeFloor nio-h2 PORT FILE CERT.pem KEY.pem   (each prints "listening on PORT" once it accepts connections)
import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

let arguments = CommandLine.arguments
guard arguments.count == (arguments.count > 1 && arguments[1] == "nio-h2" ? 6 : 4), let port = Int(arguments[2]),
      let data = FileManager.default.contents(atPath: arguments[3]) else {
    FileHandle.standardError.write(Data("usage: ServeFloor hummingbird|nio|nio-raw PORT FILE | nio-h2 PORT FILE CERT KEY\n".utf8))
    exit(64)
}
let body = ByteBuffer(bytes: data)

/// Answers every request with `body` on the event loop (HTTP/1 parts; on HTTP/2, each stream's parts as HTTP/1's).
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

/// Answers every request head (bytes up to a blank line) with fixed response bytes, first in the pipeline: SwiftNIO's
/// channel machinery with no HTTP parsing or encoding (the floor under any handler on a NIO channel).
final class RawHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    let response: ByteBuffer
    var pending = ByteBuffer()
    init(body: ByteBuffer) {
        var response = ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Type: image/jpeg\r\nContent-Length: \(body.readableBytes)\r\n\r\n")
        response.writeImmutableBuffer(body)
        self.response = response
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        pending.writeBuffer(&buffer)
        // Each blank line (CR LF CR LF) ends a request's head.
        let (consumed, heads) = pending.withUnsafeReadableBytes { bytes -> (Int, Int) in
            var (consumed, heads, index) = (0, 0, 3)
            while index < bytes.count {
                if bytes[index] == 10, bytes[index - 1] == 13, bytes[index - 2] == 10, bytes[index - 3] == 13 {
                    heads += 1
                    consumed = index + 1
                    index += 4
                } else {
                    index += 1
                }
            }
            return (consumed, heads)
        }
        pending.moveReaderIndex(forwardBy: consumed)
        for _ in 0..<heads { context.write(wrapOutboundOut(response), promise: nil) }
        pending.discardReadBytes()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }
}

/// A SwiftNIO server on 127.0.0.1:`port`, one event loop per core, each connection set up by `configure`; returns when
/// it closes.
func serveNIO(_ configure: @escaping @Sendable (any Channel) throws -> Void) async throws {
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .serverChannelOption(.backlog, value: 256)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelInitializer { channel in channel.eventLoop.makeCompletedFuture { try configure(channel) } }
        .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        .childChannelOption(.maxMessagesPerRead, value: 16)
        .bind(host: "127.0.0.1", port: port).get()
    announce(channel.localAddress?.port ?? port)
    try await channel.closeFuture.get()
}

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
    try await serveNIO { channel in
        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
        try channel.pipeline.syncOperations.addHandler(Handler(body: body))
    }
case "nio-raw":
    try await serveNIO { channel in try channel.pipeline.syncOperations.addHandler(RawHandler(body: body)) }
case "nio-h2":
    // TLS 1.3 with ALPN h2, swift-nio-http2's inline multiplexer: one stream channel per request, HTTP/2 frames turned
    // into HTTP/1 parts, the same handler. (Hummingbird's HTTP/2 server adds an async channel and a task per stream.)
    var tls = TLSConfiguration.makeServerConfiguration(
        certificateChain: try NIOSSLCertificate.fromPEMFile(arguments[4]).map { .certificate($0) },
        privateKey: .privateKey(try NIOSSLPrivateKey(file: arguments[5], format: .pem)))
    tls.applicationProtocols = ["h2"]
    let context = try NIOSSLContext(configuration: tls)
    try await serveNIO { channel in
        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
        _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
            mode: .server, connectionConfiguration: .init(), streamConfiguration: .init()
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTP1ServerCodec())
                try stream.pipeline.syncOperations.addHandler(Handler(body: body))
            }
        }
    }
default:
    FileHandle.standardError.write(Data("ServeFloor: unknown kind '\(arguments[1])' (hummingbird, nio, nio-raw or nio-h2)\n".utf8))
    exit(64)
}

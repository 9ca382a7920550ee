import ImageCore
import Logging
import NIOCore
import NIOHTTP1
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Answers the requests of one connection after another, applying latency and faults.
struct OriginResponder: Sendable {
    let configuration: OriginServer.Configuration
    let state: SharedOriginState
    let images: OriginImageStore
    let logger: Logger

    static let lastModified = "Sat, 01 Nov 2025 00:00:00 GMT"

    func serve(_ connection: NIOAsyncChannel<HTTPServerRequestPart, ByteBuffer>) async {
        let channel = connection.channel
        do {
            try await connection.executeThenClose { inbound, outbound in
                var head: HTTPRequestHead?
                for try await part in inbound {
                    switch part {
                    case .head(let requestHead): head = requestHead
                    case .body: break
                    case .end:
                        guard let requestHead = head else { return }
                        let keepOpen = try await answer(requestHead, outbound: outbound, channel: channel)
                        if !keepOpen { return }
                    }
                }
            }
        } catch {
            logger.debug("origin connection ended: \(error)")
        }
    }

    /// Answers one request; returns false when the connection must close.
    private func answer(_ head: HTTPRequestHead, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
                        channel: any Channel) async throws -> Bool {
        let hop = RedirectHop(path: head.uri)
        let path = hop?.target ?? head.uri
        let (fault, attempt) = state.withLock { state -> (Fault?, Int) in
            state.requestCounts[head.uri, default: 0] += 1
            if let agent = head.headers["User-Agent"].first { state.userAgents.insert(agent) }
            state.inFlight += 1
            state.maxInFlight = max(state.maxInFlight, state.inFlight)
            // The hops of a redirect chain are never faulted again; the last one serves the target plainly.
            let rule = hop != nil ? nil : state.faults.first { $0.pathContains.isEmpty || path.contains($0.pathContains) }
            return (rule?.fault, state.requestCounts[head.uri]!)
        }
        defer { state.withLock { $0.inFlight -= 1 } }

        if configuration.latency > .zero { try await Self.pause(configuration.latency, on: channel.eventLoop) }
        let isHead = head.method == .HEAD
        let keepAlive = head.isKeepAlive

        switch fault {
        case .status(let status)?:
            try await send(status: status, body: Array("error \(status)\n".utf8), type: "text/plain", to: outbound, head: isHead)
            return keepAlive
        case .statusWithCacheControl(let status, let cacheControl)?:
            try await send(status: status, body: Array("error \(status)\n".utf8), type: "text/plain",
                           extra: ["Cache-Control: \(cacheControl)"], to: outbound, head: isHead)
            return keepAlive
        case .failFirst(let count, let status)? where attempt <= count:
            try await send(status: status, body: Array("error \(status)\n".utf8), type: "text/plain", to: outbound, head: isHead)
            return keepAlive
        case .tooManyRequests(let count, let seconds)? where attempt <= count:
            try await send(status: 429, body: Array("slow down\n".utf8), type: "text/plain",
                           extra: ["Retry-After: \(seconds)"], to: outbound, head: isHead)
            return keepAlive
        case .htmlPage?:
            let page = Array("<!DOCTYPE html><html><body><h1>Image temporarily unavailable</h1></body></html>".utf8)
            try await send(status: 200, body: page, type: "image/jpeg", to: outbound, head: isHead)
            return keepAlive
        case .redirect(let target)?:
            try await sendRedirect(to: target, outbound: outbound, head: isHead)
            return keepAlive
        case .redirectChain(let hops)?:
            try await sendRedirect(to: RedirectHop.path(hops - 1, path), outbound: outbound, head: isHead)
            return keepAlive
        case .body(let form)?:
            guard let body = images.image(forPath: path, as: form) else { break }
            try await send(status: 200, body: body, type: "image/jpeg", extra: form == .gzip ? ["Content-Encoding: gzip"] : [],
                           to: outbound, head: isHead)
            return keepAlive
        case .oversized(let bytes, let chunked)?:
            if let hop, hop.remaining > 0 {
            try await sendRedirect(to: RedirectHop.path(hop.remaining - 1, path), outbound: outbound, head: isHead)
            return keepAlive
        }
        guard let image = images.image(forPath: path) else { break }
            try await sendOversized(image.bytes, total: bytes, chunked: chunked, to: outbound, head: isHead)
            return keepAlive
        case .hugeDimensions?:
            try await send(status: 200, body: images.hugeDimensionsImage(), type: "image/jpeg", to: outbound, head: isHead)
            return keepAlive
        case .noResponse?:
            try await Self.pause(.seconds(3600), on: channel.eventLoop)
            return false
        case .delay(let extra)?:
            try await Self.pause(extra, on: channel.eventLoop)
        default:
            break
        }

        if let hop, hop.remaining > 0 {
            try await send(status: 302, body: [], type: "text/plain", extra: ["Location: \(RedirectHop.path(hop.remaining - 1, path))"],
                           to: outbound, head: isHead)
            return keepAlive
        }
        guard let image = images.image(forPath: path) else {
            try await send(status: 404, body: Array("not found: \(path)\n".utf8), type: "text/plain", to: outbound, head: isHead)
            return keepAlive
        }
        let validators = ["ETag: \(image.etag)", "Last-Modified: \(Self.lastModified)",
                          "Cache-Control: public, max-age=\(configuration.maxAgeSeconds)"]
        if head.headers["If-None-Match"].contains(image.etag)
            || (head.headers["If-None-Match"].isEmpty && head.headers["If-Modified-Since"].contains(Self.lastModified)) {
            try await send(status: 304, body: [], type: nil, extra: validators, to: outbound, head: true)
            return keepAlive
        }
        var type = "image/jpeg"
        if case .contentType(let override)? = fault { type = override }
        switch fault {
        case .truncatedBody(let fraction)?:
            let sent = Int(Double(image.bytes.count) * fraction)
            try await send(status: 200, body: Array(image.bytes.prefix(sent)), type: type, extra: validators,
                           to: outbound, head: isHead, announcedLength: image.bytes.count)
            return false
        case .resetMidBody?:
            try await send(status: 200, body: Array(image.bytes.prefix(image.bytes.count / 2)), type: type,
                           extra: validators, to: outbound, head: isHead, announcedLength: image.bytes.count)
            if let provider = channel as? any SocketOptionProvider {
                try await provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
            }
            return false
        case .slowDrip(let rate)?:
            try await outbound.write(responseHead(status: 200, type: type, length: image.bytes.count, extra: validators))
            let chunk = max(1, rate / 10)
            for start in stride(from: 0, to: image.bytes.count, by: chunk) {
                try await outbound.write(ByteBuffer(bytes: image.bytes[start..<min(start + chunk, image.bytes.count)]))
                try await Self.pause(.milliseconds(100), on: channel.eventLoop)
            }
            return keepAlive
        case .chunked?:
            var buffer = responseHead(status: 200, type: type, length: nil, extra: validators + ["Transfer-Encoding: chunked"])
            if !isHead {
                for start in stride(from: 0, to: image.bytes.count, by: 4096) {
                    let chunk = image.bytes[start..<min(start + 4096, image.bytes.count)]
                    buffer.writeString(String(chunk.count, radix: 16) + "\r\n")
                    buffer.writeBytes(chunk)
                    buffer.writeString("\r\n")
                }
                buffer.writeString("0\r\n\r\n")
            }
            try await outbound.write(buffer)
            return keepAlive
        default:
            try await send(status: 200, body: image.bytes, type: type, extra: validators, to: outbound, head: isHead)
            return keepAlive
        }
    }

    /// Waits `duration` on the connection's event loop, whose timer fires on the origin's own thread: not `Task.sleep`,
    /// whose wake-up is a job on the cooperative pool, so that a pool kept busy by the code under test (or by CPU-heavy
    /// tests beside it) stretched every injected latency. Measured with both of a 2-core machine's pool threads running
    /// synchronous work for 1.5 s: a 300 ms latency took 1.56 s by libcurl's clock with `Task.sleep`, 0.35 s with this.
    /// (TransferEngineTests' queued-deadline test, 1.3 s to spare on paper, failed that way in a `make test`.)
    /// Cancelling the task ends the wait at once with `CancellationError`.
    static func pause(_ duration: Duration, on eventLoop: any EventLoop) async throws {
        let scheduled = eventLoop.scheduleTask(in: .nanoseconds(duration.nanoseconds)) {}
        try await withTaskCancellationHandler {
            do {
                try await scheduled.futureResult.get()
            } catch EventLoopError.cancelled {
                throw CancellationError()
            }
        } onCancel: {
            scheduled.cancel()
        }
    }

    /// A 302 to `location`, with an empty body.
    private func sendRedirect(to location: String, outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, head: Bool) async throws {
        try await send(status: 302, body: [], type: "text/plain", extra: ["Location: \(location)"], to: outbound, head: head)
    }

    /// `image`, then zeros up to `total` bytes, in 64 KiB writes; stops early when the client goes away.
    private func sendOversized(_ image: [UInt8], total: Int, chunked: Bool,
                               to outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, head: Bool) async throws {
        try await outbound.write(responseHead(status: 200, type: "image/jpeg", length: chunked ? nil : total,
                                              extra: chunked ? ["Transfer-Encoding: chunked"] : []))
        if head { return }
        let block = 64 * 1024
        var sent = 0
        while sent < total {
            let count = min(block, total - sent)
            var buffer = ByteBuffer()
            if chunked { buffer.writeString(String(count, radix: 16) + "\r\n") }
            let fromImage = max(0, min(count, image.count - sent))
            if fromImage > 0 { buffer.writeBytes(image[sent..<sent + fromImage]) }
            buffer.writeRepeatingByte(0, count: count - fromImage)
            if chunked { buffer.writeString("\r\n") }
            try await outbound.write(buffer)
            sent += count
        }
        if chunked { try await outbound.write(ByteBuffer(string: "0\r\n\r\n")) }
    }

    private func send(status: Int, body: [UInt8], type: String?, extra: [String] = [],
                      to outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>, head: Bool,
                      announcedLength: Int? = nil) async throws {
        var buffer = responseHead(status: status, type: type, length: announcedLength ?? body.count, extra: extra)
        if !head { buffer.writeBytes(body) }
        try await outbound.write(buffer)
    }

    private func responseHead(status: Int, type: String?, length: Int?, extra: [String]) -> ByteBuffer {
        var lines = ["HTTP/1.1 \(status) \(HTTPResponseStatus(statusCode: status).reasonPhrase)", "Server: TileCacheOrigin"]
        if let length { lines.append("Content-Length: \(length)") }
        if let type { lines.append("Content-Type: \(type)") }
        lines += extra
        return ByteBuffer(string: lines.joined(separator: "\r\n") + "\r\n\r\n")
    }
}

/// A hop of a redirect chain: `/hop/K/<path>` redirects to `/hop/K-1/<path>`, and `/hop/0/<path>` serves `<path>`.
struct RedirectHop {
    /// Hops still to go.
    var remaining: Int
    /// The path the chain ends at.
    var target: String

    init?(path: String) {
        let parts = path.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].isEmpty, parts[1] == "hop" else { return nil }
        let rest = parts[2].split(separator: "/", maxSplits: 1)
        guard rest.count == 2, let remaining = Int(rest[0]), remaining >= 0 else { return nil }
        self.remaining = remaining
        target = "/" + rest[1]
    }

    static func path(_ remaining: Int, _ target: String) -> String { "/hop/\(remaining)\(target)" }
}

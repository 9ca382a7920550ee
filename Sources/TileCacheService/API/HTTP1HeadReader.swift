import HTTPTypes
import NIOCore

/// The head of an HTTP/1.1 request in a strict subset of the syntax, read from bytes without NIO's decoder: what the
/// fast path needs to answer a request for an image in memory (issue 35: NIO's HTTP/1 pipeline, llhttp, its
/// `HTTPRequestHead` and `HTTPHeaders` and the hand-over between handlers, cost about 12 µs of the service's 21-24 µs
/// of user time a request on the Intel Xeon; a channel that reads heads itself costs 3.4-4.1 µs).
///
/// The subset: `GET` or `HEAD`, one space, an origin-form target (`/` then visible ASCII), one space, `HTTP/1.1`, then
/// header lines, each a token, a colon, optional spaces or tabs and a value of visible ASCII, spaces and tabs with none
/// at its end, every line ended by CRLF, the head by an empty line. No `Content-Length`, `Transfer-Encoding`, `Upgrade`
/// or `Expect` field, no `Connection` (or `Proxy-Connection`, which llhttp reads as one) but `keep-alive`, no obs-fold,
/// no bare CR or LF, no byte above 0x7E, and within the decoder's limits. Whatever falls outside it is NIO's decoder's
/// to read, as before: a head here is never one the decoder would read otherwise, or whose end it would find elsewhere
/// (`HTTP1HeadReaderTests` checks that against NIO's `HTTPRequestDecoder`, over generated heads and the heads real
/// clients send).
enum HTTP1StrictHead {
    /// What the bytes at the start of a buffer are.
    enum Reading: Equatable {
        /// A head in the subset, `length` bytes with its empty line, as the request the router gets from
        /// Hummingbird's HTTPTypes codec (`CachedImageFastPath.Handler.request`).
        case head(HTTPRequest, length: Int)
        /// The start of a head in the subset, not yet whole.
        case incomplete
        /// Not in the subset (or longer than `limits.maxHeadBytes`): the decoder's to read.
        case outside
    }

    /// The bounds within which a head is read here; beyond them it is the decoder's, which applies its own limits.
    struct Limits: Sendable {
        /// The longest head, its empty line included.
        var maxHeadBytes: Int
        /// The most header fields (NIO's decoder refuses more than its `maxHeaderFieldCount`).
        var maxFields: Int

        /// The bounds for a decoder with `maxHeaderFieldSize`, `maxHeaderListSize` and `maxHeaderFieldCount`: a head
        /// longer than 8 KiB, than any field may be or than the list may be is left to the decoder, as are as many
        /// fields as it allows or more.
        init(maxHeaderFieldSize: Int, maxHeaderListSize: Int, maxHeaderFieldCount: Int) {
            maxHeadBytes = min(8 * 1024, maxHeaderFieldSize, maxHeaderListSize)
            maxFields = maxHeaderFieldCount - 1
        }
    }

    /// Reads the head at the start of `bytes`.
    static func read(_ bytes: UnsafeRawBufferPointer, limits: Limits) -> Reading {
        var reader = Reader(bytes: bytes, end: min(bytes.count, limits.maxHeadBytes))
        let result = reader.head(limits: limits)
        if case .incomplete = result, bytes.count >= limits.maxHeadBytes { return .outside }
        return result
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        /// Where reading stops: the end of the bytes, or the longest head.
        let end: Int
        var index = 0

        init(bytes: UnsafeRawBufferPointer, end: Int) { (self.bytes, self.end) = (bytes, end) }

        mutating func head(limits: Limits) -> Reading {
            // The request line.
            let method: HTTPRequest.Method
            switch take(prefixes: Self.get, Self.head) {
            case .some(0): method = .get
            case .some(1): method = .head
            case .none: return .incomplete
            default: return .outside
            }
            let targetStart = index
            guard index < end else { return .incomplete }
            guard bytes[index] == UInt8(ascii: "/") else { return .outside }
            while index < end, Self.isVisible(bytes[index]) { index += 1 }
            guard index < end else { return .incomplete }
            let targetEnd = index
            switch take(prefixes: Self.version) {
            case .some(0): break
            case .none: return .incomplete
            default: return .outside
            }
            // The header lines.
            var fields = HTTPFields()
            var authority: String?
            var count = 0
            while true {
                guard index < end else { return .incomplete }
                if bytes[index] == UInt8(ascii: "\r") {
                    guard index + 1 < end else { return .incomplete }
                    guard bytes[index + 1] == UInt8(ascii: "\n") else { return .outside }
                    index += 2
                    break
                }
                let nameStart = index
                while index < end, Self.isToken(bytes[index]) { index += 1 }
                guard index < end else { return .incomplete }
                guard index > nameStart, bytes[index] == UInt8(ascii: ":") else { return .outside }
                let nameEnd = index
                index += 1
                while index < end, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") { index += 1 }
                let valueStart = index
                while index < end, Self.isValue(bytes[index]) { index += 1 }
                guard index < end else { return .incomplete }
                guard bytes[index] == UInt8(ascii: "\r") else { return .outside }
                guard index + 1 < end else { return .incomplete }
                guard bytes[index + 1] == UInt8(ascii: "\n") else { return .outside }
                let valueEnd = index
                if valueEnd > valueStart, bytes[valueEnd - 1] == UInt8(ascii: " ") || bytes[valueEnd - 1] == UInt8(ascii: "\t") {
                    return .outside  // trailing whitespace: the decoder's
                }
                index += 2
                count += 1
                guard count <= limits.maxFields else { return .outside }
                let name = string(nameStart..<nameEnd)
                guard let fieldName = HTTPField.Name(name), !Self.refused.contains(fieldName) else { return .outside }
                let value = string(valueStart..<valueEnd)
                // `Connection: close` ends the connection after the request, and llhttp fails on any byte after it;
                // `upgrade` changes the protocol. llhttp reads `Proxy-Connection` as `Connection`.
                if fieldName == .connection || fieldName == Self.proxyConnection, value.lowercased() != "keep-alive" {
                    return .outside
                }
                // The first `Host` is the authority, and not a field: HTTPTypes' conversion of NIO's head.
                if authority == nil, fieldName == Self.host {
                    authority = value
                } else {
                    fields.append(HTTPField(name: fieldName, value: value))
                }
            }
            return .head(HTTPRequest(method: method, scheme: "http", authority: authority, path: string(targetStart..<targetEnd),
                                     headerFields: fields), length: index)
        }

        /// Which of `prefixes` the bytes at `index` start with (moving past it), nil when they end first and agree so
        /// far with one, -1 when they start with none.
        private mutating func take(prefixes: [UInt8]...) -> Int? {
            var partial = false
            for (number, prefix) in prefixes.enumerated() {
                let available = min(prefix.count, end - index)
                if bytes[index..<(index + available)].elementsEqual(prefix[..<available]) {
                    if available == prefix.count {
                        index += available
                        return number
                    }
                    partial = true
                }
            }
            if partial {
                index = end
                return nil
            }
            return -1
        }

        private func string(_ range: Range<Int>) -> String {
            String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }

        static let get = Array("GET ".utf8)
        static let head = Array("HEAD ".utf8)
        static let version = Array(" HTTP/1.1\r\n".utf8)

        static let host = HTTPField.Name("Host")!
        static let proxyConnection = HTTPField.Name("Proxy-Connection")!

        /// Fields that frame a body or change the protocol: a head with one is the decoder's.
        static let refused: Set<HTTPField.Name> = [.contentLength, .transferEncoding, .upgrade, .expect]

        static func isVisible(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7F }

        static func isValue(_ byte: UInt8) -> Bool { (byte >= 0x20 && byte < 0x7F) || byte == UInt8(ascii: "\t") }

        /// RFC 9110's tchar.
        static func isToken(_ byte: UInt8) -> Bool { tokenTable[Int(byte)] }

        static let tokenTable: [Bool] = (0..<256).map { byte in
            switch UInt8(byte) {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default:
                return "!#$%&'*+-.^_`|~".utf8.contains(UInt8(byte))
            }
        }
    }
}

extension CachedImageFastPath {
    /// First in an HTTP/1 connection's pipeline, before NIO's decoder: reads each head in the strict subset
    /// (`HTTP1StrictHead`) and offers its request to the fast path's handler (`Handler.answerAhead`), which answers it
    /// when it can (as it answers a request the decoder gives it). A head it does not answer goes on to the decoder
    /// as its bytes, whole, so the decoder reads the same request from them; the decoder's reading is then as it was
    /// without this handler, since each head here ends a bodiless request. From the first bytes outside the subset on
    /// (a body, another method or version, anything the decoder may read differently) every byte of the connection
    /// goes on to the decoder unread. A head's start is kept until its end arrives; when the client stops sending
    /// (input closed, connection gone), what is kept goes on to the decoder first, which judges it as before.
    final class HeadReader: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer

        private let answerer: Handler
        private let limits: HTTP1StrictHead.Limits
        /// The start of a head, not yet whole.
        private var kept: ByteBuffer?
        /// Set by the first bytes outside the subset: every byte from then on is the decoder's.
        private var passingThrough = false

        init(answerer: Handler, limits: HTTP1StrictHead.Limits) {
            (self.answerer, self.limits) = (answerer, limits)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if passingThrough {
                context.fireChannelRead(data)
                return
            }
            var buffer = unwrapInboundIn(data)
            if var kept {
                self.kept = nil
                kept.writeBuffer(&buffer)
                buffer = kept
            }
            while buffer.readableBytes > 0 {
                switch buffer.withUnsafeReadableBytes({ HTTP1StrictHead.read($0, limits: limits) }) {
                case .head(let request, let length):
                    if answerer.answerAhead(request) {
                        buffer.moveReaderIndex(forwardBy: length)
                    } else {
                        context.fireChannelRead(wrapInboundOut(buffer.readSlice(length: length)!))
                    }
                case .incomplete:
                    kept = buffer
                    return
                case .outside:
                    passingThrough = true
                    context.fireChannelRead(wrapInboundOut(buffer))
                    return
                }
            }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case .some(.inputClosed) = event as? ChannelEvent { passKept(context: context) }
            context.fireUserInboundEventTriggered(event)
        }

        func channelInactive(context: ChannelHandlerContext) {
            passKept(context: context)
            context.fireChannelInactive()
        }

        /// Gives the decoder the start of a head kept here, and every byte after it.
        private func passKept(context: ChannelHandlerContext) {
            passingThrough = true
            guard let kept else { return }
            self.kept = nil
            context.fireChannelRead(wrapInboundOut(kept))
            context.fireChannelReadComplete()
        }
    }
}

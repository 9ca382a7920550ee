import NIOCore
import NIOHTTP1

/// The HTTP/1 encoding of the answers on a connection of the fast path's server: NIO's `HTTPResponseEncoder` (swift-nio
/// 2.101, `NIOHTTP1/HTTPEncoder.swift`, its default configuration: framing headers set automatically) as a value that
/// `CachedImageFastPath.Handler` keeps, the same bytes for the same parts (`HTTP1ResponseEncoderTests` compares them
/// with NIO's for every status, method, version and framing), so that the fast path's answers can be bytes made once.
///
/// NIO's encoder writes a head field by field (four `ByteBuffer` writes a field: 15,100 of a cached thumbnail's 77,300
/// instructions, issue 35's tenth session), and an answer cannot go past it: it pairs each answer with its request's
/// method, fed by NIO's decoder for every request head (`HTTPServerRequestMethodQueue`, which frames the answers to
/// HEAD and CONNECT without a body), so an answer that skipped it would leave its request's method for the next answer
/// to be framed by, and the queue would grow with every request on a keep-alive connection. The handler right after
/// the decoder sees every request head: it records the requests it passes on here (`record`), as NIO's decoder does
/// for its encoder, and writes its own answers' heads as it keeps them, encoded once (`FastAnswer.encodedHead`).
struct HTTP1ResponseEncoder {
    /// Whether the answer being written is framed in chunks.
    private var isChunked = false
    /// Set while the answer to a HEAD or CONNECT request is written: its body parts are refused, its framing fields
    /// kept, so it says what the same GET would have answered.
    private var suppressesBody = false
    /// The methods of the requests recorded whose answers' heads have not been written, oldest first (what NIO's
    /// decoder feeds its encoder: `HTTPServerRequestMethodQueue`).
    private var methods = CircularBuffer<HTTPMethod>(initialCapacity: 2)

    /// A request whose answer this encoder writes, after the answers to those recorded before it.
    mutating func record(_ method: HTTPMethod) {
        methods.append(method)
    }

    /// Writes `head`. A final answer answers the oldest request recorded and is framed by its method (with none
    /// recorded, from the status alone); an informational one other than 101 takes no request: another head follows.
    mutating func write(head: HTTPResponseHead, allocator: ByteBufferAllocator, promise: EventLoopPromise<Void>?,
                        _ write: (IOData, EventLoopPromise<Void>?) -> Void) {
        let final = !((100..<200).contains(head.status.code) && head.status.code != 101)
        let method = final ? methods.popFirst() : nil
        if let method { suppressesBody = method == .HEAD || method == .CONNECT }
        let (bytes, chunked) = Self.encoded(head, answering: method, allocator: allocator)
        isChunked = suppressesBody ? false : chunked
        write(.byteBuffer(bytes), promise)
    }

    /// `head`'s bytes, framed for an answer to a request with `method` (nil: from the status alone), and whether its
    /// body is chunked.
    static func encoded(_ head: HTTPResponseHead, answering method: HTTPMethod?,
                        allocator: ByteBufferAllocator) -> (bytes: ByteBuffer, chunked: Bool) {
        var head = head
        let chunked = frame(&head.headers, hasBody: method != .CONNECT && head.status.mayHaveResponseBody, version: head.version)
        var buffer = allocator.buffer(capacity: 256)
        buffer.writeStatusLine(version: head.version, status: head.status)
        for (name, value) in head.headers { buffer.writeField(name: name, value: value) }
        buffer.writeStaticString("\r\n")
        return (buffer, chunked)
    }

    /// Writes a body part; fails `promise` with NIO's `responseBodyNotAllowed` in an answer to HEAD or CONNECT.
    func write(body: IOData, allocator: ByteBufferAllocator, promise: EventLoopPromise<Void>?,
               _ write: (IOData, EventLoopPromise<Void>?) -> Void) {
        if suppressesBody {
            promise?.fail(NIOHTTPResponseEncoderError.responseBodyNotAllowed)
        } else if isChunked && body.readableBytes > 0 {
            // (An empty chunk would end the body: it is written unframed, as NIO does, to keep the promises' order.)
            var size = allocator.buffer(capacity: 32)
            size.writeString(String(body.readableBytes, radix: 16))
            size.writeStaticString("\r\n")
            write(.byteBuffer(size), nil)
            write(body, nil)
            write(.byteBuffer(ByteBuffer(string: "\r\n")), promise)  // (writes complete in order: the last says all)
        } else {
            write(body, promise)
        }
    }

    /// Writes the answer's end: the last chunk and `trailers` when chunked, else nothing (an empty write when there is
    /// a promise, so that it completes in order).
    mutating func write(end trailers: HTTPHeaders?, allocator: ByteBufferAllocator, promise: EventLoopPromise<Void>?,
                        _ write: (IOData, EventLoopPromise<Void>?) -> Void) {
        suppressesBody = false
        if isChunked {
            var buffer = allocator.buffer(capacity: trailers == nil ? 8 : 256)
            buffer.writeStaticString("0\r\n")
            for (name, value) in trailers ?? [:] { buffer.writeField(name: name, value: value) }
            buffer.writeStaticString("\r\n")
            write(.byteBuffer(buffer), promise)
        } else if let promise {
            write(.byteBuffer(allocator.buffer(capacity: 0)), promise)
        }
    }

    /// NIO's `correctlyFrameTransportHeaders` for an answer: whether its body is chunked. With no body (CONNECT, 1xx,
    /// 204, 304) neither `Content-Length` nor `Transfer-Encoding` is kept; with `Content-Length` no `Transfer-Encoding`;
    /// in HTTP/1.1 without either, chunked; in HTTP/1.0, as it is (the body ends with the connection).
    private static func frame(_ headers: inout HTTPHeaders, hasBody: Bool, version: HTTPVersion) -> Bool {
        guard hasBody else {
            headers.remove(name: "content-length")
            headers.remove(name: "transfer-encoding")
            return false
        }
        if headers.contains(name: "content-length") {
            headers.remove(name: "transfer-encoding")
            return false
        }
        guard version.major == 1 && version.minor >= 1 else { return false }
        headers.replaceOrAdd(name: "transfer-encoding", value: "chunked")
        return true
    }
}

extension ByteBuffer {
    /// `HTTP/1.1 200 OK\r\n`: the version, the status's code and reason phrase.
    mutating func writeStatusLine(version: HTTPVersion, status: HTTPResponseStatus) {
        switch (version.major, version.minor) {
        case (1, 1): writeStaticString("HTTP/1.1 ")
        case (1, 0): writeStaticString("HTTP/1.0 ")
        default: writeString("HTTP/\(version.major).\(version.minor) ")
        }
        writeString(String(status.code))
        writeStaticString(" ")
        writeString(status.reasonPhrase)
        writeStaticString("\r\n")
    }

    /// `name: value\r\n`, in one write: four `writeString`s and `writeStaticString`s cost about 280 instructions each
    /// (each checks exclusivity and capacity and moves the writer index).
    mutating func writeField(name: String, value: String) {
        var (name, value) = (name, value)  // (`withUTF8` is mutating: it makes a bridged string contiguous)
        let count = name.utf8.count + value.utf8.count + 4
        writeWithUnsafeMutableBytes(minimumWritableBytes: count) { out in
            var at = 0
            func put(_ bytes: UnsafeBufferPointer<UInt8>) {
                UnsafeMutableRawBufferPointer(rebasing: out[at..<at + bytes.count]).copyMemory(from: UnsafeRawBufferPointer(bytes))
                at += bytes.count
            }
            name.withUTF8(put)
            out[at] = UInt8(ascii: ":")
            out[at + 1] = UInt8(ascii: " ")
            at += 2
            value.withUTF8(put)
            out[at] = UInt8(ascii: "\r")
            out[at + 1] = UInt8(ascii: "\n")
            return at + 2
        }
    }
}

import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1

/// A request the cached-image fast path may answer: its head, and the template of the image route it matched (what
/// the metrics label it, as the router's `endpointPath`).
struct FastRequest {
    var head: HTTPRequest
    var route: String
}

/// An answer the fast path gives: its head, the fields of this request's own that follow it, and the body (nil for HEAD
/// and 304).
///
/// `head` is the image route's head with every middleware's decoration (`ServiceMiddleware.fastPathDecorate`), which is
/// the same for every request with the same decoration key and so is made once per remembered answer; `ownFields`
/// are the fields of the request's own (`X-Request-ID`, `Date`, `Server`, in that order), written after the head's as
/// the router's answer has them.
struct FastAnswer {
    /// (Any change to it drops `encodedHead`, made from it.)
    var head: HTTPResponse { didSet { encodedHead = nil } }
    var ownFields: [HTTPField] = []
    var body: ByteBuffer?
    /// The remembered answer the head is made from, which keeps it decorated (`CachedImageFastPath.decorate`).
    var prepared: PreparedImageAnswers.Prepared?
    /// `head` in HTTP/1.1 (`FastAnswer.encoded`), when the remembered answer keeps it so: the HTTP/1 fast path writes it
    /// as it is (`http1Head`).
    var encodedHead: ByteBuffer?

    init(head: HTTPResponse, body: ByteBuffer?, prepared: PreparedImageAnswers.Prepared? = nil) {
        (self.head, self.body, self.prepared) = (head, body, prepared)
        ownFields.reserveCapacity(3)  // X-Request-ID, Date, Server
    }

    /// Sets this request's own `field`, after the own fields set before it; a field of its name is removed from among
    /// them, and from `head` (where the image route never puts one).
    mutating func setOwnField(_ field: HTTPField) {
        if head.headerFields.contains(field.name) { head.headerFields[fields: field.name] = [] }
        if !ownFields.isEmpty { ownFields.removeAll { $0.name == field.name } }
        ownFields.append(field)
    }

    /// The head with this request's own fields after its own: the whole head a client is sent.
    var wholeHead: HTTPResponse {
        var whole = head
        whole.headerFields.append(contentsOf: ownFields)
        return whole
    }

    /// The whole head in HTTP/1.1, its end included: the bytes `HTTP1ResponseEncoder` (NIO's encoder's) writes for
    /// `HTTPResponseHead(wholeHead)` (HTTP/1.1, the status's code and reason phrase, every field by its name as given,
    /// framed: a 304 keeps no `Content-Length`), made from `encodedHead` when it is kept.
    func http1Head(allocator: ByteBufferAllocator) -> ByteBuffer {
        guard let encodedHead else {
            var fields: [(String, String)] = []
            fields.reserveCapacity(head.headerFields.count + ownFields.count)
            for field in head.headerFields { fields.append((field.name.rawName, field.value)) }
            for field in ownFields { fields.append((field.name.rawName, field.value)) }
            let whole = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: head.status.code, reasonPhrase: head.status.reasonPhrase),
                                         headers: HTTPHeaders(fields))
            return HTTP1ResponseEncoder.encoded(whole, answering: nil, allocator: allocator).bytes
        }
        var buffer = allocator.buffer(capacity: encodedHead.readableBytes + 160)
        buffer.writeImmutableBuffer(encodedHead)
        for field in ownFields { buffer.writeField(name: field.name.rawName, value: field.value) }
        buffer.writeStaticString("\r\n")
        return buffer
    }

    /// `head`'s status line and fields in HTTP/1.1, without the head's end, in a buffer of their size: what a remembered
    /// answer keeps (`PreparedImageAnswers.DecoratedHead`). Nil unless the encoder would write `head` as it is: a status
    /// with a body, `Content-Length` and no `Transfer-Encoding` (a remembered answer's 200 always is).
    static func encoded(_ head: HTTPResponse) -> ByteBuffer? {
        let status = HTTPResponseStatus(statusCode: head.status.code, reasonPhrase: head.status.reasonPhrase)
        guard status.mayHaveResponseBody, head.headerFields[.contentLength] != nil, head.headerFields[.transferEncoding] == nil
        else { return nil }
        var buffer = ByteBufferAllocator().buffer(capacity: 1024)
        buffer.writeStatusLine(version: .http1_1, status: status)
        for field in head.headerFields { buffer.writeField(name: field.name.rawName, value: field.value) }
        var sized = ByteBufferAllocator().buffer(capacity: buffer.readableBytes)
        sized.writeBuffer(&buffer)
        return sized
    }
}

/// A middleware of the service, in the one chain that both the router and the cached-image fast path run.
///
/// `handle(_:context:next:)` is its router half. The fast path's half is in two parts, so that what is the same for
/// every request is done once per remembered answer:
/// - `fastPathDecorate(_:for:)` puts on the image route's head the fields the router half would put on it that depend
///   on nothing of the request but what `fastPathDecorationKey` reads (CORS's fields: the policy, and the
///   `Origin` when origins are listed). The fast path keeps the decorated head with the answer it remembers, for the
///   requests with the same key.
/// - `fastPath(_:next:)` is the rest, per request: it returns `next`'s answer changed as the router half would change it
///   (a field of the request's own is set with `FastAnswer.setOwnField`, never in the head, which may be shared), or
///   declines, before calling `next`, with nil, and the request then goes to the router untouched.
///
/// Every middleware of the service conforms, so one added later cannot silently skip the images the fast path answers:
/// it must say what it does there.
protocol ServiceMiddleware: RouterMiddleware where Context == BasicRequestContext {
    func fastPath(_ request: FastRequest, next: (FastRequest) -> FastAnswer?) -> FastAnswer?
    /// The fields this middleware adds to a fast answer's head that are the same for every request with the same
    /// `fastPathDecorationKey`.
    func fastPathDecorate(_ head: inout HTTPResponse, for request: FastRequest)
    /// What of a request `fastPathDecorate` reads, when it reads anything of it (nil: nothing, for every request).
    var fastPathDecorationKey: (@Sendable (FastRequest) -> String)? { get }
}

/// The service's middleware, outside in: added to the router in this order, and run by the fast path in the same
/// order around the image route's fast case.
struct ServiceMiddlewareChain: Sendable {
    let middlewares: [any ServiceMiddleware]
    /// The decoration keys of the middlewares whose decoration reads the request, outermost first.
    private let decorationKeys: [@Sendable (FastRequest) -> String]

    init(middlewares: [any ServiceMiddleware]) {
        self.middlewares = middlewares
        decorationKeys = middlewares.compactMap(\.fastPathDecorationKey)
    }

    /// Adds every middleware to `router`, outermost first.
    func add(to router: Router<BasicRequestContext>) {
        func add(_ middleware: some ServiceMiddleware) { router.add(middleware: middleware) }
        for middleware in middlewares { add(middleware) }
    }

    /// The answer `handler` gives `request`, through every middleware's fast-path half; nil when one declines or the
    /// handler has no answer. The handler gives its answer every middleware's decoration itself (`decorate`), so that
    /// a remembered answer's can be made once.
    func fastPath(_ request: FastRequest, handler: (FastRequest) -> FastAnswer?) -> FastAnswer? {
        func run(_ index: Int, _ request: FastRequest) -> FastAnswer? {
            guard index < middlewares.count else { return handler(request) }
            return middlewares[index].fastPath(request) { run(index + 1, $0) }
        }
        return run(0, request)
    }

    /// Every middleware's decoration of `head` for `request`, innermost first, as the router's answer passes back out
    /// through them.
    func decorate(_ head: inout HTTPResponse, for request: FastRequest) {
        for middleware in middlewares.reversed() { middleware.fastPathDecorate(&head, for: request) }
    }

    /// What of `request` the decorations read: the requests with equal keys get the same decorated head. Nil when no
    /// middleware reads anything of it.
    func decorationKey(_ request: FastRequest) -> String? {
        guard !decorationKeys.isEmpty else { return nil }
        // Each part with its length, so that two middlewares' parts cannot run into one another.
        return decorationKeys.map { key in let part = key(request); return "\(part.utf8.count):\(part)" }.joined()
    }
}

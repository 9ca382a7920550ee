import HTTPTypes
import ImageCore
import NIOConcurrencyHelpers
import NIOCore

/// The fast path's memo of image answers: for a request's target and reading key (`ImagesController.readingKey`), the
/// reading of the request (its pipeline request and options, signature and allow-lists checked) and the head of the
/// answer `ImagesController.answer` made from a memory hit.
///
/// For an unconditional request for an image (the fast path leaves placeholders to the router), that head is a
/// function of the options and of five things of the served image alone: its validators (ETag, Last-Modified), content
/// type, where it came from and its length (`Inputs`). A later memory hit for the same target and reading key whose
/// inputs are equal gets the same head, so the fast path skips resolving its path, reading the request and building the
/// head again; one whose inputs differ (the image was replaced in memory) gets a head made anew, which replaces the
/// remembered one. Reading and building were 7% of the service's CPU under wrk on one cached thumbnail (perf,
/// 2026-11-28, AMD EPYC). The first fast answer made from an entry puts the head the middleware decorate in its place
/// (`keep`), so the decorations are made once an entry too (issue 35, tenth session).
///
/// Only answers the fast path made are kept, at most `capacity`, and only for a target and reading key of at most
/// `longestKey` bytes together (a cache-buster or an `Accept` header can be long: up to NIO's 80 KiB a header); when
/// full it starts again empty, so targets a client invents cannot grow it (as `ResolvedImagePaths`). About 1.8 KB an
/// entry with a short key (measured on the serve soak's mix), plus its decorated head's HTTP/1.1 bytes (a thumbnail's:
/// 252, and the buffer's own allocation), plus at most `longestKey` of key: at most about 14 MB.
///
/// Thread-safety: any thread; a lock around a dictionary of immutable entries.
final class PreparedImageAnswers: Sendable {
    /// Everything of the served image the head depends on.
    struct Inputs: Hashable, Sendable {
        var validators: ImageValidators
        var contentType: String
        var source: String
        var byteCount: Int
    }

    /// One remembered answer: the route and reading it was made for, what the image was, and the head; and the head as
    /// the middleware decorate it, once a fast answer has used it.
    final class Prepared: Sendable {
        /// The image route and element the target's path resolved to.
        let route: ResolvedImagePaths.Resolved
        let request: ImageRequest
        let options: ImageOptions
        let inputs: Inputs
        /// The head as the route made it; nil once `decorated` holds for every request (its key is nil: no middleware's
        /// decoration reads the request, which then holds for every request of the process, the middleware being fixed).
        let plain: HTTPResponse?
        /// The head as every middleware decorates it (`ServiceMiddlewareChain.decorate`) for the requests of one
        /// decoration key: made by the first fast answer, kept for the next (`PreparedImageAnswers.keep`); a request
        /// with another key makes and keeps its own.
        let decorated: DecoratedHead?

        init(route: ResolvedImagePaths.Resolved, request: ImageRequest, options: ImageOptions, inputs: Inputs, head: HTTPResponse) {
            (self.route, self.request, self.options, self.inputs) = (route, request, options, inputs)
            (plain, decorated) = (PreparedImageAnswers.compacted(head), nil)
        }

        private init(_ prepared: Prepared, decorated: DecoratedHead) {
            (route, request, options, inputs) = (prepared.route, prepared.request, prepared.options, prepared.inputs)
            plain = decorated.key == nil ? nil : prepared.plain
            self.decorated = decorated
        }

        /// The head as the route made it, or once only the decoration for every request is kept, that one.
        var head: HTTPResponse { plain ?? decorated!.head }

        /// The decorated head kept for `key`; nil when none is.
        func decoratedHead(key: String?) -> DecoratedHead? {
            decorated.flatMap { $0.key == key ? $0 : nil }
        }

        /// This answer with `head` as its head decorated for the requests of `key`.
        func decorated(_ head: HTTPResponse, for key: String?) -> Prepared {
            Prepared(self, decorated: DecoratedHead(key: key, head: head))
        }
    }

    /// A remembered answer's head with every middleware's decoration for the requests whose decoration key is `key`,
    /// and that head in HTTP/1.1 (`FastAnswer.encoded`), which the HTTP/1 fast path writes as it is: NIO's encoder wrote
    /// it field by field for every answer.
    struct DecoratedHead: Sendable {
        let key: String?
        let head: HTTPResponse
        let http1: ByteBuffer?

        init(key: String?, head: HTTPResponse) {
            (self.key, self.head, http1) = (key, PreparedImageAnswers.compacted(head), FastAnswer.encoded(head))
        }
    }

    /// `head` with its fields in an array of their size, as an entry keeps it: fields appended one by one (the route's,
    /// then the decorations, to a copy of those) leave an array with room for as many again, about 50 bytes a field.
    static func compacted(_ head: HTTPResponse) -> HTTPResponse {
        var fields = HTTPFields()
        fields.reserveCapacity(head.headerFields.count)
        fields.append(contentsOf: head.headerFields)
        var kept = head
        kept.headerFields = fields
        return kept
    }

    static let capacity = 4096
    /// The longest target and reading key, in bytes together, whose answers are kept.
    static let longestKey = 1024
    private let answers = NIOLockedValueBox<[ParsedImageRequests.Key: Prepared]>([:])

    /// How many answers are remembered.
    var count: Int { answers.withLockedValue { $0.count } }

    /// The answer remembered for `target` and `readingKey`; nil when none.
    func prepared(target: String, readingKey: String?) -> Prepared? {
        let key = ParsedImageRequests.Key(target: target, accept: readingKey)
        return answers.withLockedValue { $0[key] }
    }

    /// Puts `decorated`, made from `prepared`, in its place, unless another answer has taken it since.
    func keep(_ decorated: Prepared, for prepared: Prepared, target: String, readingKey: String?) {
        let key = ParsedImageRequests.Key(target: target, accept: readingKey)
        answers.withLockedValue { answers in
            if answers[key] === prepared { answers[key] = decorated }
        }
    }

    /// Remembers `prepared` for `target` and `readingKey`, unless they are longer than `longestKey` together.
    func remember(_ prepared: Prepared, target: String, readingKey: String?) {
        guard target.utf8.count + (readingKey?.utf8.count ?? 0) <= Self.longestKey else { return }
        let key = ParsedImageRequests.Key(target: target, accept: readingKey)
        // When full, the old entries are handed out of the lock and freed after it (every request takes the lock).
        let dropped: [ParsedImageRequests.Key: Prepared] = answers.withLockedValue { answers in
            var dropped: [ParsedImageRequests.Key: Prepared] = [:]
            if answers.count >= Self.capacity, answers[key] == nil { swap(&dropped, &answers) }
            answers[key] = prepared
            return dropped
        }
        _ = dropped
    }
}

extension PreparedImageAnswers.Inputs {
    /// What `served` is.
    init(_ served: ImageResponse) {
        self.init(validators: served.validators, contentType: served.contentType,
                  source: ImagesController.ServedFrom(served).rawValue, byteCount: served.bytes?.readableBytes ?? 0)
    }
}

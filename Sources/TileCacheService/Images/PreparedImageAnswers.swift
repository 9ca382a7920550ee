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
/// 2026-11-28, AMD EPYC).
///
/// Only answers the fast path made are kept, at most `capacity`, and only for a target and reading key of at most
/// `longestKey` bytes together (a cache-buster or an `Accept` header can be long: up to NIO's 80 KiB a header); when
/// full it starts again empty, so targets a client invents cannot grow it (as `ResolvedImagePaths`). About 1.8 KB an
/// entry with a short key (measured on the serve soak's mix), plus at most `longestKey` of key: at most about 12 MB.
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

    /// One remembered answer: the route and reading it was made for, what the image was, and the head.
    final class Prepared: Sendable {
        /// The image route and element the target's path resolved to.
        let route: ResolvedImagePaths.Resolved
        let request: ImageRequest
        let options: ImageOptions
        let inputs: Inputs
        let head: HTTPResponse

        init(route: ResolvedImagePaths.Resolved, request: ImageRequest, options: ImageOptions, inputs: Inputs, head: HTTPResponse) {
            (self.route, self.request, self.options, self.inputs, self.head) = (route, request, options, inputs, head)
        }
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

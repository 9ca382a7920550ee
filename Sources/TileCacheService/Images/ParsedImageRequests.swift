import DequeModule
import HTTPTypes
import ImageCore
import NIOConcurrencyHelpers

/// The fast path's reading of an image request (options parsed, signature and allow-lists checked) handed to the route
/// when the image was not in memory, so a miss is parsed and its signature checked once: the fast path puts it here
/// under the request's target and `Accept` (everything the reading depends on), the route takes it out. Bounded: past
/// `capacity`, the oldest is dropped (its route then reads the request itself).
///
/// Thread-safety: any thread; a lock around a dictionary and the order of its keys.
final class ParsedImageRequests: Sendable {
    struct Key: Hashable, Sendable {
        var target: String
        var accept: String?
    }

    /// The pipeline's request and the options it was read from.
    typealias Parsed = (request: ImageRequest, options: ImageOptions)

    private struct State: Sendable {
        var entries: [Key: Parsed] = [:]
        var order = Deque<Key>()
    }

    let capacity: Int
    private let state = NIOLockedValueBox(State())

    init(capacity: Int = 1_024) { self.capacity = capacity }

    /// Keeps `parsed` for the route that will answer the request with `target` and `accept`.
    func put(_ parsed: Parsed, target: String, accept: String?) {
        let key = Key(target: target, accept: accept)
        state.withLockedValue { state in
            if state.entries.updateValue(parsed, forKey: key) == nil { state.order.append(key) }
            while state.order.count > capacity, let oldest = state.order.popFirst() { state.entries[oldest] = nil }
        }
    }

    /// The reading kept for `target` and `accept`, removed; nil when none.
    func take(target: String, accept: String?) -> Parsed? {
        let key = Key(target: target, accept: accept)
        return state.withLockedValue { state in
            guard let parsed = state.entries.removeValue(forKey: key) else { return nil }
            if let index = state.order.firstIndex(of: key) { state.order.remove(at: index) }
            return parsed
        }
    }
}

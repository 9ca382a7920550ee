public import Catalogue
import Foundation
import ImageCore
import TileCacheOrigin

/// A sequence of image accesses to replay against caches: each access is the id of an object (an image URL) whose
/// decoded size is known.
public struct AccessTrace: Sendable {
    /// One distinct image.
    public struct Object: Sendable, Hashable {
        /// Its URL (the cache key).
        public var url: String
        /// Its decoded size in bytes: what it costs in the memory cache.
        public var bytes: Int
    }

    /// What the trace models, for reports (`scroll`, `detail`, `zipf 1.0`, `trace list.txt`).
    public var name: String
    /// The distinct objects; `accesses` holds indexes into it.
    public var objects: [Object]
    /// The accesses, in order.
    public var accesses: [Int32]

    /// A trace of `urls` in order; `bytes` gives each distinct URL's size.
    public init(name: String, urls: [String], bytes: (String) throws -> Int) rethrows {
        self.name = name
        var ids: [String: Int32] = [:]
        var objects: [Object] = []
        var accesses: [Int32] = []
        accesses.reserveCapacity(urls.count)
        for url in urls {
            if let id = ids[url] {
                accesses.append(id)
            } else {
                let id = Int32(objects.count)
                ids[url] = id
                objects.append(Object(url: url, bytes: try bytes(url)))
                accesses.append(id)
            }
        }
        self.objects = objects
        self.accesses = accesses
    }

    /// Total bytes of all accesses (the denominator of the byte hit rate).
    public var requestedBytes: Int { accesses.reduce(0) { $0 + objects[Int($1)].bytes } }
    /// Total size of the distinct objects: a cache this big (and with room for `objects.count` entries) misses only
    /// first accesses.
    public var footprintBytes: Int { objects.reduce(0) { $0 + $1.bytes } }
}

/// The built-in access patterns, seeded so that runs repeat exactly.
public enum TracePattern: Sendable, Hashable {
    /// The periodic-table list scrolled up and down: rows entering a window of `visibleRows` are displayed (their
    /// thumbnails accessed), and rows `prefetchRows` ahead in the scroll direction are prefetched (accessed first),
    /// as a `UITableView` with a prefetch data source does.
    case scroll(visibleRows: Int, prefetchRows: Int)
    /// Scrolling as `scroll`, and at each stop, with probability `openProbability`, a visible row's detail view opens
    /// and shows the element's full-size photo (elements without a photo show a placeholder: no access).
    case detail(visibleRows: Int, prefetchRows: Int, openProbability: Double)
    /// Every catalogue image, popularity following Zipf's law with this exponent (ranks shuffled by the seed).
    case zipf(exponent: Double)
    /// Every catalogue image equally likely.
    case uniform

    /// The short name used in reports.
    public var name: String {
        switch self {
        case .scroll: "scroll"
        case .detail: "detail"
        case .zipf(let exponent): "zipf \(exponent)"
        case .uniform: "uniform"
        }
    }

    /// `count` accesses of this pattern as catalogue image URLs built by `builder`.
    public func urls(count: Int, seed: UInt64, builder: ImageURLBuilder = ImageURLBuilder(),
                     catalogue: ElementCatalogue = .standard) -> [String] {
        var random = SplitMix64(seed: seed)
        let thumbnails = catalogue.elements.map { builder.thumbnailURL(for: $0) }
        let photos = catalogue.elements.map { $0.hasKnownMissingPhoto ? nil : builder.fullImageURL(for: $0) }
        switch self {
        case .scroll(let visible, let prefetch):
            return ListScroller(rows: thumbnails.count, visible: visible, prefetch: prefetch)
                .accesses(count: count, random: &random) { row, _ in [thumbnails[row]] }
        case .detail(let visible, let prefetch, let probability):
            return ListScroller(rows: thumbnails.count, visible: visible, prefetch: prefetch, openProbability: probability)
                .accesses(count: count, random: &random) { row, opened in
                    opened ? (photos[row].map { [$0] } ?? []) : [thumbnails[row]]
                }
        case .zipf(let exponent):
            var items = thumbnails + photos.compactMap { $0 }
            items.shuffle(using: &random)
            var cumulative: [Double] = []
            var total = 0.0
            for rank in 1...items.count {
                total += 1 / Foundation.pow(Double(rank), exponent)
                cumulative.append(total)
            }
            return (0..<count).map { _ in
                let target = Double.random(in: 0..<total, using: &random)
                var low = 0, high = cumulative.count - 1
                while low < high {
                    let middle = (low + high) / 2
                    if cumulative[middle] <= target { low = middle + 1 } else { high = middle }
                }
                return items[low]
            }
        case .uniform:
            let items = thumbnails + photos.compactMap { $0 }
            return (0..<count).map { _ in items[Int.random(in: 0..<items.count, using: &random)] }
        }
    }
}

/// A list of `rows` rows scrolled to random targets and back, as a user browses the periodic table.
struct ListScroller {
    var rows: Int
    var visible: Int
    var prefetch: Int
    var openProbability = 0.0

    /// `count` accesses: `access(row, opened)` for each row displayed or prefetched (`opened` false) and each detail
    /// view opened (`opened` true).
    func accesses(count: Int, random: inout SplitMix64, _ access: (Int, Bool) -> [String]) -> [String] {
        var result: [String] = []
        result.reserveCapacity(count)
        let visible = max(1, min(visible, rows))
        let lastTop = rows - visible
        var top = 0
        // Launch: the first screen is displayed, and the rows below it prefetched.
        for row in 0..<min(rows, visible + prefetch) { result += access(row, false) }
        while result.count < count {
            let target = Int.random(in: 0...lastTop, using: &random)
            while top != target && result.count < count {
                let step = min(Int.random(in: 1...4, using: &random), abs(target - top))
                let down = target > top
                let newTop = down ? top + step : top - step
                // Rows that come into view, then rows that come within `prefetch` of the window's leading edge.
                let entering = down ? span(top + visible, newTop + visible) : span(newTop, top).reversed()
                let prefetchRange = down
                    ? span(max(top + visible + prefetch, newTop + visible), min(rows, newTop + visible + prefetch))
                    : span(max(0, newTop - prefetch), min(max(0, top - prefetch), newTop)).reversed()
                for row in prefetchRange { result += access(row, false) }
                for row in entering { result += access(row, false) }
                top = newTop
            }
            if openProbability > 0, Double.random(in: 0..<1, using: &random) < openProbability {
                result += access(top + Int.random(in: 0..<visible, using: &random), true)
            }
        }
        return Array(result.prefix(count))
    }

    /// The rows `lower..<upper`, empty when `upper <= lower`.
    private func span(_ lower: Int, _ upper: Int) -> [Int] { lower < upper ? Array(lower..<upper) : [] }
}

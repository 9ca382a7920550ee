import Foundation
import HTTPTypes

/// The list queries of the seed's mock API, on both resources (elements and favourites):
/// `page` + `limit`, `sortBy` + `order` (`asc`/`desc`), `search` (case-insensitive substring over string fields) and
/// exact-match filters by field (`?symbol=Na`, `?number=11`, `?favoritedBy=Ada`).
///
/// A query name that is neither one of these nor a field of any listed object is ignored, as mock APIs do; a known
/// parameter with a bad value is a 400 naming it.
struct ListQuery: Sendable {
    static let reserved: Set<String> = ["page", "limit", "sortBy", "order", "search"]
    /// The response header with the number of matches before paging (as json-server sends it).
    static let totalCountHeader = HTTPField.Name("X-Total-Count")!

    var page = 1
    var limit: Int?
    var sortBy: String?
    var descending = false
    var search: String?
    var filters: [(field: String, value: String)] = []

    /// Reads the query of a list request.
    ///
    /// - Parameter fields: the fields the listed records can have (a record without one sorts as `null` and matches no
    ///   filter on it); other names are ignored.
    ///   - defaultLimit: the page size when `limit` is not given (nil: every match).
    ///   - maxLimit: the largest `limit` accepted (nil: any).
    /// - Throws: `ServiceError` 400 for a bad `page`, `limit`, `order` or `sortBy`.
    init(_ query: QueryItems, fields: Set<String>, defaultLimit: Int? = nil, maxLimit: Int? = nil) throws(ServiceError) {
        func positive(_ name: String, _ reason: ServiceError.Reason) throws(ServiceError) -> Int? {
            guard let text = query[name] else { return nil }
            guard let value = Int(text), value >= 1 else {
                throw ServiceError(.badRequest, reason: reason, message: "\(name) must be a whole number from 1, got '\(text.prefix(64))'")
            }
            return value
        }
        page = try positive("page", .badPage) ?? 1
        limit = try positive("limit", .badLimit) ?? defaultLimit
        if let maxLimit, let limit, limit > maxLimit {
            throw ServiceError(.badRequest, reason: .badLimit, message: "limit must be at most \(maxLimit), got \(limit): ask for the next page (page=2, ...) for more")
        }
        if let order = query["order"] {
            switch order.lowercased() {
            case "asc": descending = false
            case "desc": descending = true
            default: throw ServiceError(.badRequest, reason: .badOrder, message: "order must be asc or desc, got '\(order.prefix(64))'")
            }
        }
        if let field = query["sortBy"], !field.isEmpty {
            guard fields.contains(field) else {
                throw ServiceError(.badRequest, reason: .badSortBy, message: "sortBy names no field of these records: '\(field.prefix(64))'")
            }
            sortBy = field
        }
        if let text = query["search"], !text.isEmpty { search = text }
        filters = query.items.filter { !Self.reserved.contains($0.name) && fields.contains($0.name) }.map { ($0.name, $0.value) }
    }

    /// The records before the requested page (for a database's OFFSET), saturating.
    var offset: Int {
        guard let limit else { return 0 }
        let (skipped, overflow) = (page - 1).multipliedReportingOverflow(by: limit)
        return overflow ? Int(Int32.max) : min(skipped, Int(Int32.max))
    }

    /// The records matching the filters and search, sorted, and the requested page of them; `total` counts every match.
    func apply(to records: [[String: JSONValue]]) -> (page: [[String: JSONValue]], total: Int) {
        var scan = Scan(self)
        for record in records { scan.add(record) }
        return scan.result
    }

    /// Whether `record` passes every filter and the search.
    func matches(_ record: [String: JSONValue]) -> Bool {
        filters.allSatisfy { Self.matches(record[$0.field], $0.value) }
            && (search.map { text in record.values.contains { $0.string?.localizedCaseInsensitiveContains(text) == true } } ?? true)
    }

    /// The end of the requested page among the matches (`offset + limit`, saturating), or nil for every match.
    var window: Int? {
        limit.map { offset.addingReportingOverflow($0).overflow ? Int.max : offset + $0 }
    }

    /// A query answered over records given one at a time, in their listing order, keeping only what the requested
    /// page can still need: without `sortBy` the page's own records, with it the `window` first in sort order so far
    /// (every record when there is no `limit`). So a scan of any number of records holds at most about twice a
    /// window in memory, never all of them.
    struct Scan {
        let query: ListQuery
        /// The matches so far.
        private(set) var total = 0
        /// Matches kept, each with its place among the matches (ties in a sort keep listing order).
        private var kept: [(order: Int, record: [String: JSONValue])] = []

        init(_ query: ListQuery) { self.query = query }

        mutating func add(_ record: [String: JSONValue]) {
            guard query.matches(record) else { return }
            let order = total
            total += 1
            guard query.sortBy != nil else {
                if let window = query.window, order < query.offset || order >= window { return }
                kept.append((order, record))
                return
            }
            kept.append((order, record))
            if let window = query.window, kept.count >= max(window > Int.max / 2 ? Int.max : 2 * window, 32) {
                kept = Array(sorted(kept).prefix(window))
            }
        }

        /// The requested page and the number of matches.
        var result: (page: [[String: JSONValue]], total: Int) {
            guard query.sortBy != nil else { return (kept.map(\.record), total) }
            let ordered = sorted(kept)
            let start = min(ordered.count, query.offset)
            let end = query.window.map { min(ordered.count, $0) } ?? ordered.count
            return (ordered[start..<max(start, end)].map(\.record), total)
        }

        private func sorted(_ entries: [(order: Int, record: [String: JSONValue])]) -> [(order: Int, record: [String: JSONValue])] {
            guard let sortBy = query.sortBy else { return entries }
            let descending = query.descending
            return entries.sorted { a, b in
                let (x, y) = (a.record[sortBy] ?? .null, b.record[sortBy] ?? .null)
                if (x == .null) != (y == .null) { return y == .null }  // null last in either order
                switch ListQuery.compare(x, y) {
                case .orderedSame: return a.order < b.order
                case .orderedAscending: return !descending
                case .orderedDescending: return descending
                }
            }
        }
    }

    /// Exact match of a query value against a field: numbers numerically, strings as written, `true`/`false`, `null`.
    static func matches(_ field: JSONValue?, _ text: String) -> Bool {
        guard let field else { return false }
        switch field {
        case .string(let string): return string == text
        case .integer(let number): return Double(text) == Double(number)
        case .number(let number): return Double(text) == number
        case .bool(let flag): return String(flag) == text
        case .null: return text == "null"
        case .array, .object: return false
        }
    }

    /// Numbers before strings (each in natural order, strings case-insensitively), then other values.
    fileprivate static func compare(_ a: JSONValue, _ b: JSONValue) -> ComparisonResult {
        let (ra, rb) = (rank(a), rank(b))
        if ra != rb { return ra < rb ? .orderedAscending : .orderedDescending }
        if let x = a.double, let y = b.double { return x == y ? .orderedSame : (x < y ? .orderedAscending : .orderedDescending) }
        if let x = a.string, let y = b.string {
            let folded = x.caseInsensitiveCompare(y)
            return folded == .orderedSame ? x.compare(y) : folded
        }
        return .orderedSame
    }

    private static func rank(_ value: JSONValue) -> Int {
        switch value {
        case .integer, .number: 0
        case .string: 1
        case .bool: 2
        case .array, .object: 3
        case .null: 4
        }
    }
}

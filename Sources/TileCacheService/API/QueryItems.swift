import Foundation

/// A request's query string decoded as an HTML form would send it: `&`-separated `name=value` pairs, `+` as a space,
/// then percent-decoding (names too). The one parser of query strings in the service.
struct QueryItems: Sendable {
    /// The pairs in the order given; a name may repeat.
    let items: [(name: String, value: String)]

    /// Decodes `query` (without the `?`); nil or empty gives no items. Undecodable percent escapes are kept as written.
    init(_ query: String?) {
        var items: [(String, String)] = []
        for pair in (query ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            items.append((Self.decode(parts[0]), parts.count > 1 ? Self.decode(parts[1]) : ""))
        }
        self.items = items
    }

    /// These pairs.
    init(items: [(name: String, value: String)]) { self.items = items }

    /// The value of the first item named `name`, or nil.
    subscript(_ name: String) -> String? { items.first { $0.name == name }?.value }

    /// The names given, in order, without repeats.
    var names: [String] {
        var seen: Set<String> = []
        return items.map(\.name).filter { seen.insert($0).inserted }
    }

    /// `+` as a space, then percent escapes. Text with neither (`w=64`, nearly every query) is taken as it is, without
    /// Foundation's replacing and decoding, which were 8% of the service's CPU time answering `?w=64` from memory.
    private static func decode(_ text: Substring) -> String {
        guard text.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") }) else { return String(text) }
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}

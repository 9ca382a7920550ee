import Foundation

/// Which source URLs a service's clients may name (`--allowed-sources`, imgproxy's `IMGPROXY_ALLOWED_SOURCES`): each
/// pattern is a prefix of the URL, in which `*` stands for any run of characters within one part of it (no `/`, and,
/// stricter than imgproxy, no `?`, `#`, `@` or `\` either, so `https://*.example.com/` cannot be met by
/// `https://evil.test?.example.com/`). `https://images.example.com/`, `https://*.cdn.example.com/photos/`,
/// `http://127.0.0.1:*/`. A pattern that is only `*` allows any http(s) URL. An empty list allows none: open sources
/// are off until configured.
///
/// The check is of the URL as named; where it leads (every address connected to, every redirect) is
/// `AddressRule.publicOnly`'s. Thread-safety: immutable.
public struct AllowedSources: Sendable, Hashable {
    /// The patterns, as given.
    public let patterns: [String]

    /// Reads patterns (empty entries are skipped).
    ///
    /// - Throws: `AllowedSourcesError` for a pattern that is not an http or https URL prefix (`*` alone aside).
    public init(_ patterns: [String]) throws(AllowedSourcesError) {
        var kept: [String] = []
        for pattern in patterns.map({ $0.trimmingWhitespace() }) where !pattern.isEmpty {
            guard pattern == "*" || RequestURL.isHTTP(pattern) else {
                throw AllowedSourcesError("'\(pattern)' is not an allowed source: give an http:// or https:// URL prefix (with * for a part of a host or path), or * for any")
            }
            kept.append(pattern)
        }
        self.patterns = kept
    }

    /// No source allowed.
    public static let none = AllowedSources(kept: [])

    private init(kept: [String]) { patterns = kept }

    /// Whether no source is allowed.
    public var isEmpty: Bool { patterns.isEmpty }

    /// Whether `url` is allowed: an http(s) URL that some pattern is a prefix of. Scheme and host compare without
    /// regard to case.
    public func allows(_ url: String) -> Bool {
        guard RequestURL.isHTTP(url) else { return false }
        let candidate = Array(Self.caseFolded(url).utf8)
        return patterns.contains { pattern in
            pattern == "*" || Self.matchesPrefix(Array(Self.caseFolded(pattern).utf8)[...], candidate[...])
        }
    }

    /// The scheme and authority lowercased (they are case-insensitive), the path and query as given.
    private static func caseFolded(_ url: String) -> String {
        guard let separator = url.range(of: "://") else { return url }
        let rest = url[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        return url[..<authorityEnd].lowercased() + url[authorityEnd...]
    }

    /// Characters `*` does not stand for: the separators of a URL's parts, and control characters.
    private static func isBoundary(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") || byte == UInt8(ascii: "@")
            || byte == UInt8(ascii: "\\") || byte < 0x20 || byte == 0x7F
    }

    /// Whether `pattern` (with `*`) matches a prefix of `text`: the set of text positions reachable after each
    /// pattern character, so the time is pattern length x text length whatever the stars (no backtracking).
    private static func matchesPrefix(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        let text = Array(text)
        var reachable = [Bool](repeating: false, count: text.count + 1)
        reachable[0] = true
        for character in pattern {
            var next = [Bool](repeating: false, count: text.count + 1)
            if character == UInt8(ascii: "*") {
                var open = false
                for index in 0...text.count {
                    open = open || reachable[index]
                    next[index] = open
                    if index < text.count, isBoundary(text[index]) { open = false }
                }
            } else {
                for index in 0..<text.count where reachable[index] && text[index] == character { next[index + 1] = true }
            }
            guard next.contains(true) else { return false }
            reachable = next
        }
        return true
    }
}

/// A pattern `AllowedSources` cannot use.
public struct AllowedSourcesError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

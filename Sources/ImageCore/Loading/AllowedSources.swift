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
            let lowered = pattern.lowercased()
            guard pattern == "*" || lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
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
        let lowered = url.lowercased()
        guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else { return false }
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

    /// Characters `*` does not stand for.
    private static let boundaries: Set<UInt8> = Set("/?#@\\".utf8)

    /// Whether `pattern` (with `*`) matches a prefix of `text`: backtracking over the stars, each bounded by a part.
    private static func matchesPrefix(_ pattern: ArraySlice<UInt8>, _ text: ArraySlice<UInt8>) -> Bool {
        guard let first = pattern.first else { return true }
        if first == UInt8(ascii: "*") {
            let rest = pattern.dropFirst()
            var index = text.startIndex
            while true {
                if matchesPrefix(rest, text[index...]) { return true }
                guard index < text.endIndex, !boundaries.contains(text[index]) else { return false }
                index += 1
            }
        }
        guard let character = text.first, character == first else { return false }
        return matchesPrefix(pattern.dropFirst(), text.dropFirst())
    }
}

/// A pattern `AllowedSources` cannot use.
public struct AllowedSourcesError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

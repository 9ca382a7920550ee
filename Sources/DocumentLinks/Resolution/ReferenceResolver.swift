/// Turns references as documents write them into the absolute URLs to fetch: resolved against the document's base
/// (RFC 3986 §5.2), tabs and line breaks removed and characters a URL cannot hold percent-encoded (as browsers do).
public struct ReferenceResolver: Sendable {
    /// The base references resolve against.
    public let base: String
    private let parsedBase: URIReference

    /// A resolver against `base` (an absolute URL).
    public init(base: String) {
        self.base = base
        parsedBase = URIReference(parsing: Self.cleaned(base))
    }

    /// `reference` resolved against the base.
    public func resolve(_ reference: String) -> String {
        let resolved = URIReference(parsing: Self.cleaned(reference)).resolved(against: parsedBase).recomposed
        return Self.percentEncodingDisallowed(resolved)
    }

    /// The reference without tabs and line breaks (which browsers and `urllib.parse` drop) and without white space at
    /// either end.
    static func cleaned(_ text: String) -> String {
        String(text.filter { $0 != "\t" && $0 != "\n" && $0 != "\r" && $0 != "\r\n" }).trimmingASCIIWhiteSpace
    }

    /// `text` with spaces, controls, non-ASCII and `"<>\^`{|}` percent-encoded as UTF-8; `%` and everything else
    /// kept.
    static func percentEncodingDisallowed(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF")
        var out = ""
        for byte in text.utf8 {
            if byte > 0x20, byte < 0x7F, !"\"<>\\^`{|}".utf8.contains(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0xF)])
            }
        }
        return out
    }
}

extension StringProtocol {
    /// The text without ASCII white space (space, tab, line feed, form feed, carriage return) at either end, as HTML
    /// strips attribute URLs.
    var trimmingASCIIWhiteSpace: String {
        let isSpace: (Character) -> Bool = { " \t\n\r\u{0C}".contains($0) || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}

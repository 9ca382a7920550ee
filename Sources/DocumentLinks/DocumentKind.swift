import Foundation

/// The kinds of document whose images can be extracted.
public enum DocumentKind: String, Sendable, CaseIterable, Codable {
    /// An HTML page (libxml2's HTML parser).
    case html
    /// A CommonMark document (cmark), raw HTML inside it read as HTML.
    case markdown
    /// A JSON document: its http(s) string values, or those at a `JSONPath`.
    case json
    /// A style sheet: `url()` and `image-set()`.
    case css
    /// An XML sitemap with Google's image extension (`image:loc`).
    case sitemap

    /// The kind a file name's extension says (`.html .htm .md .markdown .json .css .xml`), nil for any other.
    public init?(pathExtension: String) {
        switch pathExtension.lowercased() {
        case "html", "htm", "xhtml": self = .html
        case "md", "markdown": self = .markdown
        case "json": self = .json
        case "css": self = .css
        case "xml": self = .sitemap
        default: return nil
        }
    }

    /// The kind a `Content-Type` header says (parameters ignored), nil when it names none of them.
    public init?(contentType: String) {
        let type = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        switch type {
        case "text/html", "application/xhtml+xml": self = .html
        case "text/markdown", "text/x-markdown": self = .markdown
        case "application/json", "text/json": self = .json
        case "text/css": self = .css
        case "application/xml", "text/xml": self = .sitemap
        default:
            if type.hasSuffix("+json") { self = .json } else { return nil }
        }
    }

    /// The kind the first bytes suggest: JSON for `{` or `[`, a sitemap for XML with `<urlset`, HTML for a document
    /// that starts with a tag, Markdown otherwise.
    public init(sniffing bytes: some Collection<UInt8>) {
        let head = String(decoding: bytes.prefix(4096), as: UTF8.self)
        let start = head.drop { $0 == "\u{FEFF}" || $0.isWhitespace }
        let lowered = start.lowercased()
        if start.first == "{" || start.first == "[" {
            self = .json
        } else if lowered.hasPrefix("<?xml") || lowered.hasPrefix("<urlset") {
            self = lowered.contains("<html") ? .html : .sitemap
        } else if lowered.hasPrefix("<!doctype html") || lowered.hasPrefix("<html") || lowered.hasPrefix("<head")
                    || lowered.hasPrefix("<!--") || lowered.hasPrefix("<meta") {
            self = .html
        } else {
            self = .markdown
        }
    }
}

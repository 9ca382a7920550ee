/// Finds the images a document references: the entry point of the module.
///
/// Stateless and `Sendable`: one extractor may serve any number of threads. Parsing is blocking CPU work (libxml2,
/// cmark, Expat); callers on Swift's cooperative pool run it on a thread pool.
public struct DocumentImageExtractor: Sendable {
    /// An extractor.
    public init() {}

    /// The kind of a document: `explicit` when given, else its name's extension, else its `Content-Type`, else a sniff
    /// of its bytes.
    public static func kind(of bytes: some Collection<UInt8>, name: String, contentType: String? = nil,
                            explicit: DocumentKind? = nil) -> DocumentKind {
        if let explicit { return explicit }
        let path = name.split(separator: "?", maxSplits: 1).first.map(String.init) ?? name
        if let dot = path.lastIndex(of: "."), !path[dot...].contains("/"),
           let kind = DocumentKind(pathExtension: String(path[path.index(after: dot)...])) {
            return kind
        }
        if let contentType, let kind = DocumentKind(contentType: contentType) { return kind }
        return DocumentKind(sniffing: bytes)
    }

    /// Every image reference of the document, in document order.
    ///
    /// - Parameters:
    ///   - bytes: the document.
    ///   - kind: its kind (see `kind(of:name:contentType:explicit:)`).
    ///   - location: where it lives: names it in errors and is the base of relative references.
    ///   - jsonPath: for JSON, the path whose values are wanted (every http(s) string when nil); ignored otherwise.
    /// - Throws: `DocumentLinksError` naming the document: text that is not UTF-8 (Markdown, JSON, CSS), invalid JSON
    ///   (with `JSONSerialization`'s message), XML that is not well-formed, a document a parser gave up on or one of
    ///   2 GiB or more.
    public func images(in bytes: [UInt8], kind: DocumentKind, location: DocumentLocation,
                       jsonPath: JSONPath? = nil) throws(DocumentLinksError) -> DocumentImages {
        var collector = ReferenceCollector(kind: kind, base: location.baseURL)
        guard !bytes.isEmpty else { return collector.images }
        // libxml2 and Expat take a document's length as a C int.
        guard bytes.count <= Int(Int32.max) else {
            throw DocumentLinksError(.unparsable, document: location.name,
                                     reason: "\(bytes.count) bytes: larger than the parsers read at once (2 GiB)")
        }
        switch kind {
        case .html:
            try HTMLImageExtractor(bytes: bytes, firstLine: 1, honoursBase: true).extract(into: &collector, document: location.name)
        case .markdown:
            let text = try Self.utf8Text(bytes, kind: kind, document: location.name)
            try MarkdownImageExtractor(text: text).extract(into: &collector, document: location.name)
        case .json:
            _ = try Self.utf8Text(bytes, kind: kind, document: location.name)
            try JSONImageExtractor(bytes: bytes, path: jsonPath).extract(into: &collector, document: location.name)
        case .css:
            var text = try Self.utf8Text(bytes, kind: kind, document: location.name)
            if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
            var scanner = CSSImageExtractor(text, firstLine: 1, origin: "css")
            scanner.extract(into: &collector)
        case .sitemap:
            try SitemapImageExtractor(bytes: bytes).extract(into: &collector, document: location.name)
        }
        return collector.images
    }

    /// The bytes as text, when they are UTF-8.
    private static func utf8Text(_ bytes: [UInt8], kind: DocumentKind, document: String) throws(DocumentLinksError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            let offset = Self.firstInvalidUTF8Offset(bytes)
            throw DocumentLinksError(.notUTF8, document: document,
                                     reason: "not UTF-8 (a \(kind.rawValue) document must be): invalid byte at offset \(offset), "
                                     + "line \(LineIndex(bytes).line(ofOffset: offset))")
        }
        return text
    }

    /// The offset of the first byte that is not part of valid UTF-8.
    private static func firstInvalidUTF8Offset(_ bytes: [UInt8]) -> Int {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput, .error: return offset
            }
        }
    }
}

import CCMark

/// The images a CommonMark document references, read with cmark (the reference parser): image nodes, inline and
/// reference-style (cmark resolves the references), and the images of raw HTML, blocks and inline tags, read by
/// `HTMLImageExtractor` from the line where cmark found them.
///
/// cmark 0.30 gives inline nodes their own start line (checked by the tests); a node without one (line 0) takes its
/// enclosing block's.
struct MarkdownImageExtractor {
    /// The Markdown, UTF-8.
    let text: String

    /// Parses the text and adds every image reference to `collector`.
    ///
    /// - Throws: `DocumentLinksError.Code.unparsable` when cmark returns no document, or what the HTML extractor
    ///   throws for a piece of raw HTML.
    func extract(into collector: inout ReferenceCollector, document: String) throws(DocumentLinksError) {
        let utf8 = Array(text.utf8)
        let root: OpaquePointer? = utf8.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                cmark_parse_document(chars.baseAddress, chars.count, CMARK_OPT_SOURCEPOS | CMARK_OPT_UNSAFE)
            }
        }
        guard let root else {
            throw DocumentLinksError(.unparsable, document: document, reason: "cmark could not parse the Markdown")
        }
        defer { cmark_node_free(root) }
        guard let iterator = cmark_iter_new(root) else {
            throw DocumentLinksError(.unparsable, document: document, reason: "cmark could not walk the parsed Markdown")
        }
        defer { cmark_iter_free(iterator) }
        var blockLine = 1
        while true {
            let event = cmark_iter_next(iterator)
            if event == CMARK_EVENT_DONE { break }
            guard event == CMARK_EVENT_ENTER, let node = cmark_iter_get_node(iterator) else { continue }
            let type = cmark_node_get_type(node)
            let ownLine = Int(cmark_node_get_start_line(node))
            let isBlock = type.rawValue >= CMARK_NODE_FIRST_BLOCK.rawValue && type.rawValue <= CMARK_NODE_LAST_BLOCK.rawValue
            if isBlock, ownLine > 0 { blockLine = ownLine }
            let line = ownLine > 0 ? ownLine : blockLine
            switch type {
            case CMARK_NODE_IMAGE:
                collector.add(cmark_node_get_url(node).map { String(cString: $0) } ?? "", line: line, context: "markdown image")
            case CMARK_NODE_HTML_BLOCK, CMARK_NODE_HTML_INLINE:
                let html = cmark_node_get_literal(node).map { String(cString: $0) } ?? ""
                guard !html.isEmpty else { continue }
                let extractor = HTMLImageExtractor(bytes: Array(html.utf8), firstLine: line, honoursBase: false)
                try extractor.extract(into: &collector, document: document)
            default:
                break
            }
        }
    }
}

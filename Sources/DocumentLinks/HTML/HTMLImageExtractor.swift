import CLibXML2

/// The images an HTML page (or a piece of HTML inside Markdown) references, read with libxml2's HTML parser:
/// `img src`/`srcset`, `source srcset`, icons (`link rel=icon`, `apple-touch-icon`, ...), `og:image` and
/// `twitter:image` metas, inline `style` attributes and `<style>` elements (as CSS). Relative references resolve
/// against the first `<base href>` when asked to honour it.
///
/// libxml2 gives an element the line where its start tag ends (and 65535 for any line past it: its HTML parser
/// ignores XML_PARSE_BIG_LINES); reports give the line where the tag starts (as BeautifulSoup and browsers'
/// view-source do), found by `StartTagLines`.
struct HTMLImageExtractor {
    /// The `rel` tokens of icon links.
    static let iconRelations: Set<String> = ["icon", "apple-touch-icon", "apple-touch-icon-precomposed"]
    /// The `meta` `property`/`name` values whose `content` is an image.
    static let imageMetaNames: Set<String> = ["og:image", "og:image:url", "og:image:secure_url", "twitter:image", "twitter:image:src"]

    /// The HTML's bytes.
    let bytes: [UInt8]
    /// The document's line where `bytes` start (1 for a page; the block's line for HTML inside Markdown).
    let firstLine: Int
    /// Whether `<base href>` changes how references resolve (a page: yes; HTML inside Markdown: no).
    let honoursBase: Bool

    /// Parses `bytes` and adds every image reference to `collector`.
    ///
    /// - Throws: `DocumentLinksError.Code.unparsable` when libxml2 returns no document.
    func extract(into collector: inout ReferenceCollector, document: String) throws(DocumentLinksError) {
        let options = Int32(HTML_PARSE_RECOVER.rawValue | HTML_PARSE_NOERROR.rawValue | HTML_PARSE_NOWARNING.rawValue
                                | HTML_PARSE_NONET.rawValue | XML_PARSE_BIG_LINES.rawValue)
        // UTF-8 when it is; otherwise libxml2 follows the page's <meta charset> (or its default).
        let encoding: String? = String(validating: bytes, as: UTF8.self) != nil ? "UTF-8" : nil
        let parsed: htmlDocPtr? = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                guard let start = chars.baseAddress else { return nil }
                if let encoding { return htmlReadMemory(start, Int32(chars.count), nil, encoding, options) }
                return htmlReadMemory(start, Int32(chars.count), nil, nil, options)
            }
        }
        guard let parsed else {
            throw DocumentLinksError(.unparsable, document: document, reason: "libxml2's HTML parser could not read the HTML "
                                     + "(line \(firstLine) on)")
        }
        defer { xmlFreeDoc(parsed) }
        let lines = StartTagLines(bytes)
        if honoursBase, let href = Self.firstBaseHref(from: xmlDocGetRootElement(parsed)) {
            collector.resolver = ReferenceResolver(base: collector.resolver.resolve(href))
        }
        var walker = Walker(firstLine: firstLine, lines: lines)
        walker.visit(siblingsFrom: parsed.pointee.children, into: &collector)
    }

    /// The `href` of the page's first `<base>` that has one.
    private static func firstBaseHref(from node: xmlNodePtr?) -> String? {
        var current = node
        while let element = current {
            if element.pointee.type == XML_ELEMENT_NODE, name(of: element) == "base",
               let href = attribute("href", of: element), !href.trimmingASCIIWhiteSpace.isEmpty {
                return href
            }
            if let found = firstBaseHref(from: element.pointee.children) { return found }
            current = element.pointee.next
        }
        return nil
    }

    /// The element's name, lowercased (libxml2's HTML parser lowercases names already).
    static func name(of node: xmlNodePtr) -> String {
        node.pointee.name.map { String(cString: $0).lowercased() } ?? ""
    }

    /// The value of attribute `wanted` (matched without regard to case), entities decoded; nil when absent.
    static func attribute(_ wanted: String, of node: xmlNodePtr) -> String? {
        var property = node.pointee.properties
        while let attribute = property {
            if let name = attribute.pointee.name, String(cString: name).lowercased() == wanted {
                return text(of: attribute.pointee.children)
            }
            property = attribute.pointee.next
        }
        return nil
    }

    /// The text of a list of text nodes (an attribute's value, a `<style>` element's contents).
    static func text(of first: xmlNodePtr?) -> String {
        var value = ""
        var child = first
        while let node = child {
            if let content = node.pointee.content { value += String(cString: content) }
            child = node.pointee.next
        }
        return value
    }

    /// The walk over the tree, in document order.
    private struct Walker {
        let firstLine: Int
        var lines: StartTagLines

        mutating func visit(siblingsFrom first: xmlNodePtr?, into collector: inout ReferenceCollector) {
            var current = first
            while let node = current {
                if node.pointee.type == XML_ELEMENT_NODE {
                    visitElement(node, into: &collector)
                    visit(siblingsFrom: node.pointee.children, into: &collector)
                }
                current = node.pointee.next
            }
        }

        private mutating func visitElement(_ node: xmlNodePtr, into collector: inout ReferenceCollector) {
            let name = HTMLImageExtractor.name(of: node)
            let interesting = ["img", "source", "link", "meta", "style"].contains(name)
            let style = HTMLImageExtractor.attribute("style", of: node)
            guard interesting || style != nil else { return }
            let libxmlLine = max(1, xmlGetLineNo(node))
            let tag = lines.startTag(named: name, reportedLine: libxmlLine)
            let line = tag.start + firstLine - 1
            switch name {
            case "img":
                if let src = HTMLImageExtractor.attribute("src", of: node) { collector.add(src, line: line, context: "img src") }
                if let srcset = HTMLImageExtractor.attribute("srcset", of: node) {
                    for url in SrcsetCandidates.urls(in: srcset) { collector.add(url, line: line, context: "img srcset") }
                }
            case "source":
                if let srcset = HTMLImageExtractor.attribute("srcset", of: node) {
                    for url in SrcsetCandidates.urls(in: srcset) { collector.add(url, line: line, context: "source srcset") }
                }
            case "link":
                let relations = (HTMLImageExtractor.attribute("rel", of: node) ?? "").lowercased()
                    .split(whereSeparator: { " \t\n\r\u{0C}".contains($0) }).map(String.init)
                if let relation = relations.first(where: { HTMLImageExtractor.iconRelations.contains($0) }),
                   let href = HTMLImageExtractor.attribute("href", of: node) {
                    collector.add(href, line: line, context: relation == "icon" ? "link icon" : "link \(relation)")
                }
            case "meta":
                let key = (HTMLImageExtractor.attribute("property", of: node) ?? HTMLImageExtractor.attribute("name", of: node) ?? "")
                    .trimmingASCIIWhiteSpace.lowercased()
                if HTMLImageExtractor.imageMetaNames.contains(key), let content = HTMLImageExtractor.attribute("content", of: node) {
                    collector.add(content, line: line, context: "meta \(key)")
                }
            case "style":
                let css = HTMLImageExtractor.text(of: node.pointee.children)
                // The contents start on the line where the start tag ends.
                let cssLine = tag.end + firstLine - 1
                var scanner = CSSImageExtractor(css, firstLine: cssLine, origin: "css")
                scanner.extract(into: &collector)
            default:
                break
            }
            if let style {
                var scanner = CSSImageExtractor(style, firstLine: line, origin: "style")
                scanner.extract(into: &collector)
            }
        }
    }
}

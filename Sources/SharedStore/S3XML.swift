import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An S3 answer's XML, read with a real parser (libxml2, through Foundation's `XMLParser`): the text of every element
/// that holds text, by its path from the root (`ListBucketResult/Contents/Size`). Namespaces are ignored (S3 puts its
/// own on the root), entities and CDATA decoded by the parser.
struct S3XML: Sendable, Equatable {
    static func == (lhs: S3XML, rhs: S3XML) -> Bool { lhs.elements.elementsEqual(rhs.elements) { $0.path == $1.path && $0.text == $1.text } }

    /// Each text element, in document order: its path and its text.
    private(set) var elements: [(path: [String], text: String)] = []

    /// Parses `bytes`; nil when they are not well-formed XML.
    init?(_ bytes: [UInt8]) {
        let reader = Reader()
        let parser = XMLParser(data: Data(bytes))
        parser.delegate = reader
        parser.shouldProcessNamespaces = true
        // libxml2's errors arrive through the delegate; `parse()` alone let a mismatched tag through on Linux. A
        // document is one root element, closed.
        guard parser.parse(), parser.parserError == nil, !reader.failed, reader.roots == 1, reader.isBalanced else { return nil }
        elements = reader.elements
    }

    /// The texts of the elements at `path` (from the root), in document order.
    func values(_ path: String...) -> [String] {
        elements.filter { $0.path == path }.map(\.text)
    }

    /// The text of the first element at `path`.
    func value(_ path: String...) -> String? {
        elements.first { $0.path == path }?.text
    }

    /// `XMLParser`'s delegate: the open elements' path and the text of the innermost one.
    private final class Reader: NSObject, XMLParserDelegate {
        var elements: [(path: [String], text: String)] = []
        /// A parse or validation error was reported.
        var failed = false
        /// Elements opened at the top level.
        var roots = 0
        /// Every element opened was closed.
        var isBalanced: Bool { path.isEmpty }
        private var path: [String] = []
        private var text = ""
        private var hasChildren: [Bool] = []

        func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            if !hasChildren.isEmpty { hasChildren[hasChildren.count - 1] = true }
            if path.isEmpty { roots += 1 }
            path.append(elementName)
            hasChildren.append(false)
            text = ""
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, foundCDATA block: Data) { text += String(decoding: block, as: UTF8.self) }

        func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
            guard path.last == elementName else {
                failed = true
                parser.abortParsing()
                return
            }
            if hasChildren.popLast() == false { elements.append((path, text)) }
            path.removeLast()
            text = ""
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) { failed = true }

        func parser(_ parser: XMLParser, validationErrorOccurred validationError: any Error) { failed = true }
    }
}

import CExpat

/// An S3 answer's XML, read with a real parser (Expat, Debian's libexpat1): the text of every element that holds text,
/// by its path from the root (`ListBucketResult/Contents/Size`). Names are as written (S3's default namespace adds no
/// prefix); entities, character references and CDATA are decoded by the parser; a document that is not well-formed
/// (a mismatched tag, a cut, nothing at all) is refused.
///
/// Expat rather than Foundation's `XMLParser`: that one is libxml2, which links ICU, and loading both cost every
/// `tilecache` process 3.7 MB of memory and its start-up time, for the shared store alone.
struct S3XML: Sendable, Equatable {
    /// Each text element, in document order: its path and its text.
    private(set) var elements: [(path: [String], text: String)] = []

    static func == (lhs: S3XML, rhs: S3XML) -> Bool {
        lhs.elements.elementsEqual(rhs.elements) { $0.path == $1.path && $0.text == $1.text }
    }

    /// Parses `bytes`; nil when they are not one well-formed XML document.
    init?(_ bytes: [UInt8]) {
        guard let parser = XML_ParserCreate(nil) else { return nil }
        defer { XML_ParserFree(parser) }
        let reader = Reader()
        let context = Unmanaged.passRetained(reader)
        defer { context.release() }
        XML_SetUserData(parser, context.toOpaque())
        XML_SetElementHandler(parser, { data, name, _ in
            guard let data, let name else { return }
            Unmanaged<Reader>.fromOpaque(data).takeUnretainedValue().start(String(cString: name))
        }, { data, _ in
            guard let data else { return }
            Unmanaged<Reader>.fromOpaque(data).takeUnretainedValue().end()
        })
        XML_SetCharacterDataHandler(parser) { data, text, length in
            guard let data, let text, length > 0 else { return }
            let bytes = UnsafeRawBufferPointer(start: text, count: Int(length))
            Unmanaged<Reader>.fromOpaque(data).takeUnretainedValue().text.append(contentsOf: bytes)
        }
        let status = bytes.withUnsafeBufferPointer { buffer in
            // One call, the whole document: `isFinal` makes a cut document an error.
            buffer.baseAddress.map { XML_Parse(parser, $0, Int32(buffer.count), 1) }
                ?? XML_Parse(parser, nil, 0, 1)
        }
        guard status == XML_STATUS_OK else { return nil }
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

    /// Expat's callbacks' state: the open elements' path and the text of the innermost one (UTF-8, as Expat gives it).
    private final class Reader {
        var elements: [(path: [String], text: String)] = []
        var text: [UInt8] = []
        private var path: [String] = []
        private var hasChildren: [Bool] = []

        func start(_ name: String) {
            if !hasChildren.isEmpty { hasChildren[hasChildren.count - 1] = true }
            path.append(name)
            hasChildren.append(false)
            text = []
        }

        func end() {
            if hasChildren.popLast() == false { elements.append((path, String(decoding: text, as: UTF8.self))) }
            path.removeLast()
            text = []
        }
    }
}

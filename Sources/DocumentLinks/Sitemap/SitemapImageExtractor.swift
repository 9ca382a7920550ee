import CExpat

/// The images of an XML sitemap: the text of every `loc` element in Google's image namespace
/// (`http://www.google.com/schemas/sitemap-image/1.1`, whatever its prefix), read with Expat, namespace-aware, with
/// the line where the element starts.
struct SitemapImageExtractor {
    /// The namespace of image entries.
    static let imageNamespace = "http://www.google.com/schemas/sitemap-image/1.1"

    /// The XML's bytes.
    let bytes: [UInt8]

    /// Parses the sitemap and adds each `image:loc` to `collector`.
    ///
    /// - Throws: `DocumentLinksError.Code.unparsable` with Expat's message and line when the XML is not well-formed.
    func extract(into collector: inout ReferenceCollector, document: String) throws(DocumentLinksError) {
        // Names arrive as "namespace localname", split by the separator given here.
        guard let parser = XML_ParserCreateNS(nil, XML_Char(UInt8(ascii: " "))) else {
            throw DocumentLinksError(.unparsable, document: document, reason: "Expat could not create a parser (out of memory?)")
        }
        defer { XML_ParserFree(parser) }
        let reader = LocationReader(parser: parser)
        let context = Unmanaged.passRetained(reader)
        defer { context.release() }
        XML_SetUserData(parser, context.toOpaque())
        XML_SetElementHandler(parser, { data, name, _ in
            guard let data, let name else { return }
            Unmanaged<LocationReader>.fromOpaque(data).takeUnretainedValue().start(String(cString: name))
        }, { data, _ in
            guard let data else { return }
            Unmanaged<LocationReader>.fromOpaque(data).takeUnretainedValue().end()
        })
        XML_SetCharacterDataHandler(parser) { data, text, length in
            guard let data, let text, length > 0 else { return }
            let reader = Unmanaged<LocationReader>.fromOpaque(data).takeUnretainedValue()
            guard reader.current != nil else { return }
            text.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
                reader.text.append(contentsOf: UnsafeBufferPointer(start: $0, count: Int(length)))
            }
        }
        let status = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                XML_Parse(parser, chars.baseAddress, Int32(chars.count), 1)
            }
        }
        guard status == XML_STATUS_OK else {
            let message = XML_ErrorString(XML_GetErrorCode(parser)).map { String(cString: $0) } ?? "unknown error"
            throw DocumentLinksError(.unparsable, document: document,
                                     reason: "not well-formed XML: \(message) at line \(XML_GetCurrentLineNumber(parser))")
        }
        for found in reader.found { collector.add(found.text, line: found.line, context: "sitemap image:loc") }
    }

    /// Expat's callbacks' state: the `image:loc` being read and those read. Used on the parsing thread only, during
    /// `XML_Parse`.
    private final class LocationReader {
        let parser: XML_Parser
        var current: Int?  // the line of the image:loc being read
        var text: [UInt8] = []
        var found: [(text: String, line: Int)] = []

        init(parser: XML_Parser) { self.parser = parser }

        func start(_ name: String) {
            guard name == SitemapImageExtractor.imageNamespace + " loc" else { return }
            current = Int(XML_GetCurrentLineNumber(parser))
            text = []
        }

        func end() {
            guard let line = current else { return }
            found.append((String(decoding: text, as: UTF8.self).trimmingASCIIWhiteSpace, line))
            current = nil
        }
    }
}

import Foundation

/// The images a JSON document references: every string value that is an absolute http(s) URL, or, given a
/// `JSONPath`, every string value at that path (whatever it holds: a relative one resolves against the base).
struct JSONImageExtractor {
    /// The JSON's bytes.
    let bytes: [UInt8]
    /// The path whose values are wanted; nil for every http(s) URL.
    let path: JSONPath?

    /// Validates the JSON and adds its image references to `collector`; a path that matches nothing adds a warning.
    ///
    /// - Throws: `DocumentLinksError.Code.invalidJSON` with `JSONSerialization`'s message.
    func extract(into collector: inout ReferenceCollector, document: String) throws(DocumentLinksError) {
        do {
            _ = try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        } catch {
            var detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? "\(error)"
            // JSONSerialization says "around character N" (a byte offset for these bytes): the line is what a person
            // looks for.
            if let range = detail.range(of: #"character (\d+)"#, options: .regularExpression),
               let offset = Int(detail[range].dropFirst("character ".count)) {
                detail += " (line \(LineIndex(bytes).line(ofOffset: offset)))"
            }
            throw DocumentLinksError(.invalidJSON, document: document, reason: "not valid JSON: \(detail)")
        }
        var scanner = JSONStringScanner(bytes)
        var matched = 0
        for value in scanner.values() {
            if let path {
                guard path.matches(value.location) else { continue }
                matched += 1
                collector.add(value.text, line: value.line, context: "json path \(path)")
            } else if Self.isHTTPURL(value.text) {
                collector.add(value.text, line: value.line, context: "json string")
            }
        }
        if let path, matched == 0 {
            collector.images.warnings.append("\(document): --json-path '\(path)' matches no string value")
        }
    }

    /// Whether `text` starts with `http://` or `https://` (any case) and names a host.
    static func isHTTPURL(_ text: String) -> Bool {
        let lowered = text.lowercased()
        for scheme in ["http://", "https://"] where lowered.hasPrefix(scheme) {
            return lowered.count > scheme.count
        }
        return false
    }
}

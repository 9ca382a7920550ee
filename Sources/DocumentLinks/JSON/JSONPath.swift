/// A path to the values of a JSON document whose strings are image URLs, as `--json-path` writes it: keys separated
/// by dots, `[]` for every element of an array (`photos[].img_src`, `data[].images[].url`, `[].src`).
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    /// One step of a path.
    public enum Step: Sendable, Hashable {
        /// The member of an object with this key.
        case key(String)
        /// Every element of an array.
        case eachElement
    }

    /// The steps, from the root.
    public var steps: [Step]
    /// The path as written.
    public var description: String

    /// Parses `text`.
    ///
    /// - Throws: `DocumentLinksError.Code.invalidJSONPath` (naming the path) for an empty path or key, or a `[` not
    ///   followed by `]`.
    public init(parsing text: String) throws(DocumentLinksError) {
        func invalid(_ reason: String) -> DocumentLinksError {
            DocumentLinksError(.invalidJSONPath, document: "--json-path '\(text)'", reason: reason)
        }
        description = text
        steps = []
        guard !text.isEmpty else { throw invalid("the path is empty") }
        var rest = Substring(text)
        var expectKey = true
        while !rest.isEmpty {
            if rest.hasPrefix("[]") {
                steps.append(.eachElement)
                rest = rest.dropFirst(2)
                expectKey = false
            } else if rest.hasPrefix("[") {
                throw invalid("'[' must be followed by ']' (a path takes every element of an array: photos[].img_src)")
            } else if rest.hasPrefix(".") {
                guard !expectKey || steps.isEmpty == false else { throw invalid("a key is empty") }
                rest = rest.dropFirst()
                expectKey = true
                if rest.isEmpty || rest.hasPrefix(".") { throw invalid("a key is empty") }
            } else {
                let end = rest.firstIndex(where: { $0 == "." || $0 == "[" }) ?? rest.endIndex
                steps.append(.key(String(rest[..<end])))
                rest = rest[end...]
                expectKey = false
            }
        }
    }

    /// Whether a string value at `location` (keys and array elements from the root) is on this path.
    func matches(_ location: [Step]) -> Bool { location == steps }
}

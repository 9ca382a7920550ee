/// Why a document's images could not be extracted: names the document and the reason.
public struct DocumentLinksError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, for callers that branch on it.
    public enum Code: String, Sendable, Equatable {
        /// A text document (Markdown, JSON, CSS) that is not UTF-8.
        case notUTF8 = "not-utf8"
        /// JSON that `JSONSerialization` rejects.
        case invalidJSON = "invalid-json"
        /// A document the parser could not read at all (libxml2, cmark or Expat gave up).
        case unparsable
        /// A `--json-path` that is not a path (empty key, unbalanced brackets).
        case invalidJSONPath = "invalid-json-path"
    }

    /// What went wrong.
    public var code: Code
    /// The document, as `DocumentLocation.name` names it.
    public var document: String
    /// The reason a person can act on.
    public var reason: String

    /// An error of `document`.
    public init(_ code: Code, document: String, reason: String) {
        self.code = code
        self.document = document
        self.reason = reason
    }

    /// `document: reason`.
    public var description: String { "\(document): \(reason)" }
}

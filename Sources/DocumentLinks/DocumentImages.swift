/// What a document's extraction found.
public struct DocumentImages: Sendable, Equatable {
    /// The document's kind (given, or from its name, Content-Type or bytes).
    public var kind: DocumentKind
    /// Every image reference, in document order (a URL used twice is listed twice).
    public var references: [ImageReference]
    /// `data:` URIs met and skipped: they are inside the document, nothing to fetch.
    public var dataURIsSkipped: Int
    /// Findings that are not errors, e.g. a JSON path that matches nothing.
    public var warnings: [String]

    /// A result of `kind` with nothing found yet.
    public init(kind: DocumentKind, references: [ImageReference] = [], dataURIsSkipped: Int = 0, warnings: [String] = []) {
        self.kind = kind
        self.references = references
        self.dataURIsSkipped = dataURIsSkipped
        self.warnings = warnings
    }
}

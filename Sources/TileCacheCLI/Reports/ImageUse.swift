/// Where a document uses an image: reported with each broken image, as lychee reports links (`document:line`).
public struct ImageUse: Sendable, Codable, Equatable, Hashable, CustomStringConvertible {
    /// The document, as given on the command line (path or URL).
    public var document: String
    /// The 1-based line.
    public var line: Int

    /// A use at `line` of `document`.
    public init(document: String, line: Int) {
        self.document = document
        self.line = line
    }

    /// `document:line`.
    public var description: String { "\(document):\(line)" }
}

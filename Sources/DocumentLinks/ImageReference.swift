/// One image a document references: where it resolves to, how it is written, and where.
public struct ImageReference: Sendable, Hashable, Codable {
    /// The absolute URL, resolved against the document's base (`<base href>`, `--base`, or where the document lives);
    /// characters a URL cannot hold (spaces, non-ASCII) are percent-encoded, as browsers do.
    public var url: String
    /// The reference as the document writes it (entities and escapes decoded, surrounding white space removed).
    public var written: String
    /// The 1-based line of the document where it is written.
    public var line: Int
    /// What refers to it: `img src`, `img srcset`, `source srcset`, `link icon`, `meta og:image`, `style url()`,
    /// `markdown image`, `json string`, `json path photos[].img_src`, `css url()`, `sitemap image:loc`, ...
    public var context: String

    /// A reference found at `line` of a document, written `written`, resolved to `url`.
    public init(url: String, written: String, line: Int, context: String) {
        self.url = url
        self.written = written
        self.line = line
        self.context = context
    }
}

import Foundation

/// Where a document lives, for naming it in errors and resolving its relative references.
public struct DocumentLocation: Sendable, Hashable {
    /// How reports name the document: the path or URL as given.
    public var name: String
    /// The URL relative references resolve against: the document's URL, `--base`, or a `file:` URL of its path.
    public var baseURL: String

    /// A document fetched from `url`.
    public init(url: String) {
        name = url
        baseURL = url
    }

    /// A local document at `path`; relative references resolve against `base` (where it lives on the web) when given,
    /// else against the file's own `file:` URL.
    public init(path: String, base: String? = nil) {
        name = path
        if let base {
            baseURL = base
        } else {
            let absolute = URL(fileURLWithPath: path).standardizedFileURL
            baseURL = absolute.absoluteString
        }
    }
}

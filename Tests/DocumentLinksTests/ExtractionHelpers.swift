import DocumentLinks

/// The references of `text` read as `kind`, as if it lived at `base`.
func references(_ text: String, _ kind: DocumentKind, base: String = "https://example.org/docs/page.html",
                jsonPath: String? = nil) throws -> [ImageReference] {
    try images(text, kind, base: base, jsonPath: jsonPath).references
}

/// The whole extraction of `text` read as `kind`, as if it lived at `base`.
func images(_ text: String, _ kind: DocumentKind, base: String = "https://example.org/docs/page.html",
            jsonPath: String? = nil) throws -> DocumentImages {
    let path = try jsonPath.map { try JSONPath(parsing: $0) }
    return try DocumentImageExtractor().images(in: Array(text.utf8), kind: kind, location: DocumentLocation(url: base), jsonPath: path)
}

/// `url@line` of each reference: short enough to compare whole lists in one `#expect`.
func urlsAndLines(_ references: [ImageReference]) -> [String] {
    references.map { "\($0.url)@\($0.line)" }
}

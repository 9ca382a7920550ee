import ArgumentParser
import DocumentLinks
import ImageCore

/// `--extract`: the images documents use (HTML, Markdown, JSON, CSS, sitemaps) instead of the catalogue or a URL
/// list. `validate` and `prefetch` share it.
struct ExtractOptions: ParsableArguments {
    @Option(name: .customLong("extract"),
            help: ArgumentHelp("Check the images a document uses: a path or an http(s) URL of an HTML, Markdown, JSON, CSS or sitemap document (repeatable). Replaces the catalogue and --urls.",
                               valueName: "file|url"))
    var documents: [String] = []

    @Option(help: ArgumentHelp("With --extract, for JSON documents: take only the string values at this path, keys separated by dots and [] for every element of an array (e.g. photos[].img_src). Without it, every string that is an http(s) URL.",
                               valueName: "path"))
    var jsonPath: String?

    @Option(help: ArgumentHelp("With --extract: where the local documents live on the web, so their relative references resolve to http(s) URLs (without it they resolve to file: URLs beside the document).",
                               valueName: "url"))
    var base: String?

    @Option(help: ArgumentHelp("With --extract: read every document as this kind (html, markdown, json, css, sitemap) rather than by its extension, Content-Type or first bytes.",
                               valueName: "kind"),
            transform: { text in
                guard let kind = DocumentKind(rawValue: text.lowercased()) else {
                    throw ValidationError("'\(text)' is not one of \(DocumentKind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return kind
            })
    var documentKind: DocumentKind?

    /// Whether documents were given.
    var isActive: Bool { !documents.isEmpty }

    /// The options that need `--extract`, by name, when given without it.
    var givenWithoutDocuments: [String] {
        guard documents.isEmpty else { return [] }
        return [("--json-path", jsonPath != nil), ("--base", base != nil), ("--document-kind", documentKind != nil)].filter(\.1).map(\.0)
    }

    /// The parsed `--json-path`, nil without one.
    ///
    /// - Throws: `DocumentLinksError` naming the path and what is wrong with it.
    func parsedJSONPath() throws(DocumentLinksError) -> JSONPath? {
        guard let jsonPath else { return nil }
        return try JSONPath(parsing: jsonPath)
    }

    func validate() throws {
        let orphans = givenWithoutDocuments
        guard orphans.isEmpty else {
            throw ValidationError("\(orphans.joined(separator: ", ")) applies to the documents of --extract: give --extract FILE|URL")
        }
        if let base, !RequestURL.isHTTP(base) {
            throw ValidationError("--base '\(base)' is not an http(s) URL")
        }
        do {
            _ = try parsedJSONPath()
        } catch {
            throw ValidationError(error.description)
        }
        for document in documents where document.isEmpty {
            throw ValidationError("--extract needs a path or a URL, got an empty value")
        }
    }

    /// The conflict of `--extract` with the other ways to choose images, or nil.
    func conflict(with source: SourceOptions) -> ValidationError? {
        guard isActive else { return nil }
        let others = [("--urls", source.urls != nil), ("--elements", source.elements != nil), ("--kind", source.kind != nil)]
            .filter(\.1).map(\.0) + source.hosts.given
        guard !others.isEmpty else { return nil }
        return ValidationError("--extract takes the images from documents, so \(others.joined(separator: ", ")) would be ignored: "
                               + "give either --extract or --urls or catalogue options")
    }
}

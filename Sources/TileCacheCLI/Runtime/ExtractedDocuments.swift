import DocumentLinks
import Foundation
import ImageCore

/// The images of the documents given to `--extract`: each document read (a path, or an http(s) URL fetched with the
/// project's `TransferEngine`), its references extracted, and each image listed once with every place it is used.
struct ExtractedDocuments: Encodable {
    /// One document read.
    struct Document: Encodable {
        /// As given on the command line.
        var document: String
        /// How it was read.
        var kind: DocumentKind
        /// Image references found (a URL used twice counts twice).
        var references: Int
        /// `data:` URIs skipped.
        var dataURIsSkipped: Int
        /// Findings that are not errors (a `--json-path` that matches nothing).
        var warnings: [String]
    }

    /// One reference, in the shape `validate --dump --format json` prints.
    struct Reference: Encodable {
        /// The absolute URL checked.
        var url: String
        /// As the document writes it.
        var written: String
        /// The document, as given.
        var document: String
        /// The 1-based line.
        var line: Int
        /// What refers to it (`img src`, `markdown image`, ...).
        var context: String
    }

    /// Every document, in the order given.
    var documents: [Document]
    /// Every reference, document by document, in document order.
    var references: [Reference]

    enum CodingKeys: String, CodingKey { case documents, references }

    /// Each image once (first use first), with every place it is used; `usedIn`'s first entry is its `origin`.
    var images: [TargetImage] {
        var order: [String] = []
        var uses: [String: [ImageUse]] = [:]
        for reference in references {
            if uses[reference.url] == nil { order.append(reference.url) }
            uses[reference.url, default: []].append(ImageUse(document: reference.document, line: reference.line))
        }
        return order.map { url in
            var image = TargetImage(url: url, origin: uses[url]?.first?.description, usedIn: uses[url] ?? [])
            if !RequestURL.isHTTP(url), !LocalImageCheck.isFileURL(url) {
                image.invalidInput = "not an http(s) or file: URL"
            } else if LocalImageCheck.isFileURL(url), (uses[url] ?? []).contains(where: { RequestURL.isHTTP($0.document) }) {
                // A page on the web may not make this machine read its files (and report their sizes and first bytes).
                image.invalidInput = "a file: URL in a fetched document: local files are read for local documents only"
            }
            return image
        }
    }

    /// The warnings of every document.
    var warnings: [String] { documents.flatMap(\.warnings) }

    /// Reads and extracts every document of `options`.
    ///
    /// - Throws: `InputError` naming the document: unreadable, not fetched (HTTP status or transfer error), or not
    ///   extractable (not UTF-8, invalid JSON, malformed XML).
    static func load(_ options: ExtractOptions) async throws(InputError) -> ExtractedDocuments {
        let jsonPath: JSONPath?
        do {
            jsonPath = try options.parsedJSONPath()
        } catch {
            throw InputError(error.description)
        }
        var engine: TransferEngine?
        var result = ExtractedDocuments(documents: [], references: [])
        for name in options.documents {
            let bytes: [UInt8], contentType: String?
            var location: DocumentLocation
            if RequestURL.isHTTP(name) {
                let transfers = engine ?? TransferEngine()
                engine = transfers
                let response: TransferResponse
                do {
                    response = try await transfers.perform(TransferRequest(url: name))
                } catch {
                    throw InputError("\(name): cannot fetch the document: \(error.message)")
                }
                guard (200..<300).contains(response.status) else {
                    throw InputError("\(name): cannot fetch the document: HTTP \(response.status)")
                }
                (bytes, contentType) = (response.body, response.headers["Content-Type"])
                location = DocumentLocation(url: response.effectiveURL)
                location.name = name
            } else {
                do {
                    bytes = try await BlockingWork.run { () throws(ImageCoreError) in
                        try LocalFile.readRegular(name, atMost: TransferOptions().maxBodyBytes)  // as a fetched document
                    }
                } catch {
                    throw InputError("\(name): cannot read the document: \(error.message)")
                }
                contentType = nil
                location = DocumentLocation(path: name, base: options.base)
            }
            let kind = DocumentImageExtractor.kind(of: bytes, name: name, contentType: contentType, explicit: options.documentKind)
            let found: DocumentImages
            do {
                found = try await BlockingWork.run { [location] () throws(DocumentLinksError) in
                    try DocumentImageExtractor().images(in: bytes, kind: kind, location: location, jsonPath: jsonPath)
                }
            } catch {
                throw InputError(error.description)
            }
            result.documents.append(Document(document: name, kind: kind, references: found.references.count,
                                             dataURIsSkipped: found.dataURIsSkipped, warnings: found.warnings))
            result.references += found.references.map {
                Reference(url: $0.url, written: $0.written, document: name, line: $0.line, context: $0.context)
            }
        }
        return result
    }

    /// The `--dump` listing: every reference as `document:line: url (context)`, then a summary per document.
    func dumpText() -> String {
        var text = references.map { "\($0.document):\($0.line): \($0.url) (\($0.context))\n" }.joined()
        for document in documents {
            text += "\(document.document): \(document.kind.rawValue), \(document.references) image references"
            if document.dataURIsSkipped > 0 { text += ", \(document.dataURIsSkipped) data: URIs skipped" }
            text += "\n"
        }
        text += "\(Set(references.map(\.url)).count) distinct images in \(documents.count) documents\n"
        return text
    }
}

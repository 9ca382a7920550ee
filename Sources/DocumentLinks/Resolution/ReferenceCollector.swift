/// Collects a document's image references as the extractors meet them: resolves each, skips what is not fetched
/// (empty values, `data:` URIs, counted, and `javascript:`), keeps document order.
struct ReferenceCollector {
    /// What references resolve against; HTML's `<base href>` replaces it.
    var resolver: ReferenceResolver
    /// What has been found.
    var images: DocumentImages

    init(kind: DocumentKind, base: String) {
        resolver = ReferenceResolver(base: base)
        images = DocumentImages(kind: kind)
    }

    /// Adds `written`, found at `line` in `context`, unless it is empty, a `data:` or a `javascript:` URI.
    mutating func add(_ written: String, line: Int, context: String) {
        let value = written.trimmingASCIIWhiteSpace
        guard !value.isEmpty else { return }
        let lowered = ReferenceResolver.cleaned(value).lowercased()
        if lowered.hasPrefix("data:") {
            images.dataURIsSkipped += 1
            return
        }
        if lowered.hasPrefix("javascript:") { return }
        images.references.append(ImageReference(url: resolver.resolve(value), written: value, line: line, context: context))
    }
}

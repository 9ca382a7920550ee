import ImageCore
import NIOConcurrencyHelpers

/// The origin's generated images, rendered on first request and kept for the life of the process.
///
/// The cache is shared by every origin in the process (keyed by seed and quality too): rendering is deterministic, so
/// a second origin, as every test starts, serves the same bytes without paying for them again. All the images of a
/// seed take about 10 MB.
final class OriginImageStore: Sendable {
    struct Image: Sendable {
        var bytes: [UInt8]
        var etag: String
    }

    let synthesizer: ImageSynthesizer
    private static let cache = NIOLockedValueBox<[String: Image]>([:])
    private let catalogue = ElementCatalogue.standard

    init(synthesizer: ImageSynthesizer) { self.synthesizer = synthesizer }

    /// The image at `path`, or nil when the hosts have none (unknown element, photo for 90 and up, wrong spelling).
    func image(forPath path: String) -> Image? {
        guard let (element, kind) = resolve(path) else { return nil }
        let key = cacheKey(element, kind)
        if let image = Self.cache.withLockedValue({ $0[key] }) { return image }
        let bytes = synthesizer.jpeg(element, kind: kind)
        let image = Image(bytes: bytes, etag: "\"\(synthesizer.seed)-\(kind.rawValue)-\(element.number)-\(bytes.count)\"")
        Self.cache.withLockedValue { $0[key] = image }
        return image
    }

    /// The image at `path` in another form (nil when there is no image at `path`), rendered once and kept.
    func image(forPath path: String, as form: BodyForm) -> [UInt8]? {
        guard let (element, kind) = resolve(path) else { return nil }
        if form == .empty { return [] }
        let key = cacheKey(element, kind) + "/" + form.rawValue
        if let image = Self.cache.withLockedValue({ $0[key] }) { return image.bytes }
        let bytes = BodyForms.encode(synthesizer.render(element, kind: kind), as: form, quality: synthesizer.quality) {
            image(forPath: path)!.bytes  // the JPEG already served at `path` (resolve succeeded, so there is one)
        }
        Self.cache.withLockedValue { $0[key] = Image(bytes: bytes, etag: "") }
        return bytes
    }

    /// A JPEG whose SOF claims 65500x65500 pixels (the real, small image underneath).
    func hugeDimensionsImage() -> [UInt8] {
        let bytes = synthesizer.jpeg(catalogue.element(number: 1)!, kind: .thumbnail)
        guard let patched = JPEGDeclaredSize.claiming(width: 65500, height: 65500, in: bytes) else {
            fatalError("the encoder's JPEG has no SOF marker")
        }
        return patched
    }

    /// The key of an image in the process-wide cache, which also holds the images of origins with other seeds and
    /// qualities.
    private func cacheKey(_ element: Element, _ kind: ImageKind) -> String {
        "\(synthesizer.seed)/\(synthesizer.quality)/\(kind.rawValue)/\(element.number)"
    }

    private func resolve(_ path: String) -> (Element, ImageKind)? {
        let path = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        let parts = path.split(separator: "/").map(String.init)
        if parts.count == 4, parts[0] == "periodictable", parts[1] == "Tiles", parts[3] == "s7.JPG",
           parts[2].count == 3, let number = Int(parts[2]), let element = catalogue.element(number: number) {
            return (element, .thumbnail)
        }
        if parts.count == 2, parts[0] == "images-of-elements", parts[1].hasSuffix(".jpg") {
            let name = String(parts[1].dropLast(4))
            guard let element = catalogue.elements.first(where: { Self.photoName(of: $0) == name }),
                  !element.hasKnownMissingPhoto else { return nil }
            return (element, .full)
        }
        return nil
    }

    static func photoName(of element: Element) -> String {
        let name = element.name.lowercased()
        return OriginServer.photoSpellings[name] ?? name
    }
}

import Catalogue
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

    /// The hosts' paths, as the catalogue reads them (`/periodictable/Tiles/NNN/s7.JPG`, `/images-of-elements/<name>.jpg`).
    static let paths = ImageURLBuilder(tilesBase: "/periodictable", imagesBase: "/images-of-elements")

    /// The path of `element`'s photo as the photo host spells it.
    static func photoPath(of element: Element) -> String { paths.imagesBase + "/" + photoName(of: element) + ".jpg" }

    /// The element and kind at `path`, as the real hosts have them: the photo host spells each name one way only
    /// (`caesium.jpg`, never `cesium.jpg`) and has no photos from 90 up.
    private func resolve(_ path: String) -> (Element, ImageKind)? {
        guard let image = Self.paths.image(at: path, in: catalogue) else { return nil }
        if image.kind == .full {
            let requested = path.prefix { $0 != "?" }
            guard !image.isKnownMissing, requested == Self.photoPath(of: image.element) else { return nil }
        }
        return (image.element, image.kind)
    }

    static func photoName(of element: Element) -> String {
        let name = element.name.lowercased()
        return OriginServer.photoSpellings[name] ?? name
    }
}

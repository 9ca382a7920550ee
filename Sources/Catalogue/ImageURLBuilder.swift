/// Which of the two image families an image belongs to.
public enum ImageKind: String, Sendable, Codable, CaseIterable {
    /// The small tile image: `<tilesBase>/Tiles/NNN/s7.JPG`.
    case thumbnail
    /// The large photo: `<imagesBase>/<lowercased name>.jpg`.
    case full
}

/// One catalogue image: which element, which family, and its URL.
public struct CatalogueImage: Sendable, Hashable {
    /// The element shown.
    public var element: Element
    /// Thumbnail or full-size photo.
    public var kind: ImageKind
    /// The URL the image is fetched from.
    public var url: String
    /// True when the upstream host is known not to have this image (full-size photos for 90 and up):
    /// reports list such a failure as expected, not as broken.
    public var isKnownMissing: Bool
    /// The URLs of the image under the element's other spellings (`caesium.jpg` for Cesium's photo), tried in order
    /// when `url` is not found; empty for thumbnails and most photos.
    public var alternativeURLs: [String]
}

/// Builds the two families of image URLs from configurable base URLs.
public struct ImageURLBuilder: Sendable, Hashable {
    /// The thumbnail host's default base URL.
    public static let defaultTilesBase = "http://www.theodoregray.com/periodictable"
    /// The photo host's default base URL.
    public static let defaultImagesBase = "http://images-of-elements.com"

    /// Base URL of the thumbnails, without a trailing slash.
    public var tilesBase: String
    /// Base URL of the full-size photos, without a trailing slash.
    public var imagesBase: String

    /// A builder over the given bases (a trailing slash is dropped).
    public init(tilesBase: String = defaultTilesBase, imagesBase: String = defaultImagesBase) {
        self.tilesBase = Self.withoutTrailingSlash(tilesBase)
        self.imagesBase = Self.withoutTrailingSlash(imagesBase)
    }

    /// `<tilesBase>/Tiles/NNN/s7.JPG`.
    public func thumbnailURL(for element: Element) -> String {
        "\(tilesBase)/Tiles/\(element.paddedNumber)/s7.JPG"
    }

    /// `<imagesBase>/<lowercased name>.jpg`.
    public func fullImageURL(for element: Element) -> String {
        "\(imagesBase)/\(element.name.lowercased()).jpg"
    }

    /// `<imagesBase>/<other spelling>.jpg` for each other spelling of the element's name (`caesium.jpg` for Cesium).
    public func otherPhotoURLs(for element: Element) -> [String] {
        element.otherSpellings.map { "\(imagesBase)/\($0).jpg" }
    }

    /// The URL of one image of an element.
    public func url(for element: Element, kind: ImageKind) -> String {
        switch kind {
        case .thumbnail: thumbnailURL(for: element)
        case .full: fullImageURL(for: element)
        }
    }

    /// Every image of the given elements and kinds, thumbnails first within an element.
    public func images(for elements: [Element], kinds: [ImageKind] = ImageKind.allCases) -> [CatalogueImage] {
        elements.flatMap { element in
            kinds.map { kind in
                CatalogueImage(
                    element: element, kind: kind, url: url(for: element, kind: kind),
                    isKnownMissing: kind == .full && element.hasKnownMissingPhoto,
                    alternativeURLs: kind == .full ? otherPhotoURLs(for: element) : [])
            }
        }
    }

    // MARK: - From a URL back to the catalogue (the one parser of image URLs)

    /// The catalogue image at `url` when it lies under this builder's bases: `<tilesBase>/Tiles/NNN/s7.JPG` or
    /// `<imagesBase>/<name>.jpg`, the name lowercased or another spelling of it. A query string is ignored.
    public func image(at url: String, in catalogue: ElementCatalogue = .standard) -> CatalogueImage? {
        let path = Self.withoutQuery(url)
        if path.hasPrefix(tilesBase + "/Tiles/") {
            let parts = path.dropFirst(tilesBase.count + "/Tiles/".count).split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[1] == "s7.JPG", let element = Self.element(tile: String(parts[0]), in: catalogue) else { return nil }
            return images(for: [element], kinds: [.thumbnail])[0]
        }
        if path.hasPrefix(imagesBase + "/") {
            let file = path.dropFirst(imagesBase.count + 1)
            guard file.hasSuffix(".jpg"), !file.contains("/"),
                  let element = Self.element(photo: String(file.dropLast(4)), in: catalogue) else { return nil }
            return images(for: [element], kinds: [.full])[0]
        }
        return nil
    }

    /// The element and kind a URL of either host names, on any base: `…/Tiles/NNN/s7.JPG` (a thumbnail) or
    /// `…/<name>.jpg` (a photo, the name lowercased or another spelling of it). A query string is ignored. For URLs
    /// whose bases are unknown: access traces, disk cache entries.
    public static func image(at url: String, in catalogue: ElementCatalogue = .standard) -> (element: Element, kind: ImageKind)? {
        let parts = withoutQuery(url).split(separator: "/", omittingEmptySubsequences: false)
        if parts.count >= 3, parts[parts.count - 1] == "s7.JPG", parts[parts.count - 3] == "Tiles",
           let element = element(tile: String(parts[parts.count - 2]), in: catalogue) {
            return (element, .thumbnail)
        }
        if let file = parts.last, file.hasSuffix(".jpg"), let element = element(photo: String(file.dropLast(4)), in: catalogue) {
            return (element, .full)
        }
        return nil
    }

    /// The element a thumbnail's number names: exactly three digits, `001` to `118`.
    public static func element(tile number: String, in catalogue: ElementCatalogue = .standard) -> Element? {
        guard number.count == 3, number.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(number) else { return nil }
        return catalogue.element(number: value)
    }

    /// The element a photo's file name (before `.jpg`) names: its name lowercased, or another spelling of it (`caesium`).
    /// Symbols, numbers and other cases name none, as on the photo host.
    public static func element(photo name: String, in catalogue: ElementCatalogue = .standard) -> Element? {
        guard let element = catalogue.element(matching: name),
              name == element.name.lowercased() || element.otherSpellings.contains(name) else { return nil }
        return element
    }

    private static func withoutQuery(_ url: String) -> Substring {
        url.prefix { $0 != "?" && $0 != "#" }
    }

    private static func withoutTrailingSlash(_ base: String) -> String {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }
}

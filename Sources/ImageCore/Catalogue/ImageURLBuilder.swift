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

    private static func withoutTrailingSlash(_ base: String) -> String {
        var base = base
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }
}

import ArgumentParser
import ImageCore

/// Which images a command works on: catalogue images (bases, elements, kinds) or a URL list.
struct SourceOptions: ParsableArguments {
    @Option(help: "Thumbnail base URL (<base>/Tiles/NNN/s7.JPG).")
    var tilesBase = ImageURLBuilder.defaultTilesBase

    @Option(help: "Full-size photo base URL (<base>/<lowercased name>.jpg).")
    var imagesBase = ImageURLBuilder.defaultImagesBase

    @Option(help: "Elements: numbers, ranges, symbols or names, e.g. 1-20,26,Fe,gold (default: all 118).",
            transform: { try ElementSelection(parsing: $0) })
    var elements: ElementSelection?

    @Option(help: "Which images of each element: thumbnails, full or all.")
    var kind: KindOption = .all

    @Option(help: "A file of image URLs (one a line, # comments allowed, - for stdin) instead of the catalogue.")
    var urls: String?

    /// The images selected; catalogue options are ignored when `--urls` is given.
    func images(includeKnownMissing: Bool = true) throws -> [TargetImage] {
        if let urls { return try ImageList.urls(fromFile: urls) }
        let chosen = (elements ?? ElementSelection(all: .standard)).elements
        let images = ImageList.catalogue(chosen, kinds: kind.kinds,
                                         builder: ImageURLBuilder(tilesBase: tilesBase, imagesBase: imagesBase))
        return includeKnownMissing ? images : images.filter { !$0.isKnownMissing }
    }

    func validate() throws {
        for (name, base) in [("--tiles-base", tilesBase), ("--images-base", imagesBase)] {
            let lowered = base.lowercased()
            guard lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
                throw ValidationError("\(name) '\(base)' is not an http(s) URL")
            }
        }
    }
}

/// `--kind`.
enum KindOption: String, CaseIterable, ExpressibleByArgument {
    case thumbnails, full, all

    var kinds: [ImageKind] {
        switch self {
        case .thumbnails: [.thumbnail]
        case .full: [.full]
        case .all: [.thumbnail, .full]
        }
    }
}

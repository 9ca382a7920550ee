import ArgumentParser
import Catalogue
import ImageCore

/// Where the catalogue's images live: the two seed hosts' bases. `serve` and the commands that fetch share it.
struct HostOptions: ParsableArguments {
    @Option(help: "Thumbnail base URL (<base>/Tiles/NNN/s7.JPG; default \(ImageURLBuilder.defaultTilesBase)).")
    var tilesBase: String?

    @Option(help: "Full-size photo base URL (<base>/<lowercased name>.jpg; default \(ImageURLBuilder.defaultImagesBase)).")
    var imagesBase: String?

    /// The URL builder for the catalogue's images.
    var builder: ImageURLBuilder {
        ImageURLBuilder(tilesBase: tilesBase ?? ImageURLBuilder.defaultTilesBase,
                        imagesBase: imagesBase ?? ImageURLBuilder.defaultImagesBase)
    }

    /// The options given, by name (`--urls` conflicts with them).
    var given: [String] {
        [("--tiles-base", tilesBase != nil), ("--images-base", imagesBase != nil)].filter(\.1).map(\.0)
    }

    func validate() throws {
        for (name, base) in [("--tiles-base", tilesBase), ("--images-base", imagesBase)] {
            guard let base else { continue }
            guard RequestURL.isHTTP(base) else {
                throw ValidationError("\(name) '\(base)' is not an http(s) URL")
            }
        }
    }
}

/// Which images a command works on: catalogue images (bases, elements, kinds) or a URL list, never both.
struct SourceOptions: ParsableArguments {
    @OptionGroup var hosts: HostOptions

    @Option(help: "Elements: numbers, ranges, symbols or names, e.g. 1-20,26,Fe,gold (default: all 118).",
            transform: { try ElementSelection(parsing: $0) })
    var elements: ElementSelection?

    @Option(help: "Which images of each element: thumbnails, full or all (default: all).")
    var kind: KindOption?

    @Option(help: "A file of image URLs (one a line, # comments allowed, - for stdin) instead of the catalogue.")
    var urls: String?

    /// The URL builder for the catalogue's images.
    var builder: ImageURLBuilder { hosts.builder }

    /// The images selected: the `--urls` list, else the catalogue's.
    func images() throws -> [TargetImage] {
        if let urls { return try ImageList.urls(fromFile: urls) }
        let chosen = (elements ?? ElementSelection(all: .standard)).elements
        return ImageList.catalogue(chosen, kinds: (kind ?? .all).kinds, builder: builder)
    }

    /// The error for a selection with nothing in it: only a `--urls` list can be empty (blank lines and comments).
    var nothingToCheck: InputError {
        InputError("nothing to check: \(urls == "-" ? "stdin" : urls ?? "the selection") lists no URLs (only blank lines and comments?); "
                   + "pass --allow-empty to accept an empty list")
    }

    func validate() throws {
        if urls != nil {
            let catalogueOptions = [("--elements", elements != nil), ("--kind", kind != nil)].filter(\.1).map(\.0) + hosts.given
            guard catalogueOptions.isEmpty else {
                throw ValidationError("--urls replaces the catalogue, so \(catalogueOptions.joined(separator: ", ")) would be ignored: "
                                      + "give either --urls or catalogue options")
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

public import Catalogue
import Foundation
import ImageCore

/// One image a command works on: a catalogue image or a line of a URL list.
public struct TargetImage: Sendable, Hashable {
    /// The URL, or the line as written when it is not a valid http(s) URL.
    public var url: String
    /// The catalogue element, for catalogue images.
    public var element: Element?
    /// Thumbnail or full-size, for catalogue images.
    public var kind: ImageKind?
    /// Upstream is known to lack this image (full-size photos for 90 and up).
    public var isKnownMissing = false
    /// The image's URLs under other spellings of the name, tried when `url` is not found (catalogue photos).
    public var alternativeURLs: [String] = []
    /// Why the line is not a fetchable URL (nil when it is one).
    public var invalidInput: String?
    /// Where it came from, for messages: `FILE:LINE`, or nil for the catalogue.
    public var origin: String?
    /// For an image found in documents (`--extract`): every place it is used, in the order found.
    public var usedIn: [ImageUse] = []
}

/// Builds the list of images from the catalogue or from a URL list.
public enum ImageList {
    /// The catalogue images of `elements` and `kinds` at the given bases.
    public static func catalogue(_ elements: [Element], kinds: [ImageKind], builder: ImageURLBuilder) -> [TargetImage] {
        builder.images(for: elements, kinds: kinds).map {
            TargetImage(url: $0.url, element: $0.element, kind: $0.kind, isKnownMissing: $0.isKnownMissing,
                        alternativeURLs: $0.alternativeURLs)
        }
    }

    /// Each catalogue image's other-spelling URLs by its URL, for `ImagePipeline.prefetch(_:alternatives:)`.
    public static func alternatives(of images: [TargetImage]) -> [String: [String]] {
        Dictionary(images.filter { !$0.alternativeURLs.isEmpty }.map { ($0.url, $0.alternativeURLs) }, uniquingKeysWith: { first, _ in first })
    }

    /// The URLs of the images upstream is known to lack, for `ImagePipeline.prefetch`'s `expectedMissing`: their
    /// failures are counted as expected missing, not as failed.
    public static func knownMissing(of images: [TargetImage]) -> Set<String> {
        Set(images.filter(\.isKnownMissing).map(\.url))
    }

    /// Reads a URL list: one URL a line, blank lines and `#` comments skipped (`ListText`); `-` reads stdin.
    ///
    /// Lines that are not absolute http(s) URLs are kept, marked invalid, so reports can name them.
    /// - Throws: `InputError` naming the file when it cannot be read.
    public static func urls(fromFile path: String) throws(InputError) -> [TargetImage] {
        let input = try InputFile.read(path, what: "the URL list")
        return urls(fromText: input.text, source: input.name)
    }

    /// Parses the text of a URL list (as `ListText` reads lists: any line ending, comments, a byte-order mark);
    /// a URL given twice is checked once.
    public static func urls(fromText text: String, source: String) -> [TargetImage] {
        var images: [TargetImage] = []
        var seen = Set<String>()
        for entry in ListText.entries(text) {
            let line = entry.text
            guard seen.insert(line).inserted else { continue }
            var image = TargetImage(url: line, origin: "\(source):\(entry.line)")
            if !RequestURL.isHTTP(line) {
                image.invalidInput = "not an http(s) URL"
            } else if line.contains(where: \.isWhitespace) {
                image.invalidInput = "URL contains white space"
            }
            images.append(image)
        }
        return images
    }
}

/// A text input given as a path, or `-` for stdin (`--urls`, `--trace`).
struct InputFile {
    /// The text.
    var text: String
    /// How reports name it: the path, or `stdin`.
    var name: String

    /// Reads `path` (`-`: stdin).
    ///
    /// - Throws: `InputError` naming the file and `what` it is when it cannot be read.
    static func read(_ path: String, what: String) throws(InputError) -> InputFile {
        if path == "-" {
            return InputFile(text: String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self), name: "stdin")
        }
        do {
            return InputFile(text: String(decoding: try LocalFile.read(path), as: UTF8.self), name: path)
        } catch {
            throw InputError("\(path): cannot read \(what): \(error.message)")
        }
    }
}

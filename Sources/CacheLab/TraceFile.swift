public import Catalogue
import Foundation
import ImageCore

/// A trace file: one access a line, an image URL or an element (number, symbol or name: its thumbnail), read as
/// `ListText` reads lists (any line ending, comments, a byte-order mark). `tilecache serve --record-trace FILE` writes
/// such files.
public enum TraceFile {
    /// A line that is neither.
    public struct InvalidLine: Error, CustomStringConvertible {
        public var file: String
        public var line: Int
        public var text: String
        public var description: String {
            "\(file):\(line): '\(text)' is neither an http(s) URL nor an element (number, symbol or name)"
        }
    }

    /// The URLs of the accesses in `text` (read from `file`, named in errors); elements become thumbnail URLs.
    public static func urls(in text: String, file: String, builder: ImageURLBuilder = ImageURLBuilder(),
                            catalogue: ElementCatalogue = .standard) throws(InvalidLine) -> [String] {
        var urls: [String] = []
        for entry in ListText.entries(text) {
            if entry.text.hasPrefix("http://") || entry.text.hasPrefix("https://") {
                urls.append(entry.text)
            } else if let element = catalogue.element(matching: entry.text) {
                urls.append(builder.thumbnailURL(for: element))
            } else {
                throw InvalidLine(file: file, line: entry.line, text: entry.text)
            }
        }
        return urls
    }
}

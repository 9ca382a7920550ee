import Foundation
import ImageCore

/// A trace file: one access a line, an image URL or an element (number, symbol or name: its thumbnail). Blank lines
/// and `#` comments are skipped. `tilecache serve --record-trace FILE` writes such files.
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
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("http://") || line.hasPrefix("https://") {
                urls.append(line)
            } else if let element = catalogue.element(matching: line) {
                urls.append(builder.thumbnailURL(for: element))
            } else {
                throw InvalidLine(file: file, line: index + 1, text: line)
            }
        }
        return urls
    }
}

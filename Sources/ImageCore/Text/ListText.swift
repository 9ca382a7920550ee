/// The entries of a list file, one a line: URL lists (`--urls`) and access traces (`--trace`).
///
/// Written for files from anywhere: lines end at `\n`, `\r\n` or a lone `\r` (Windows and old Mac files, spreadsheet
/// exports); a UTF-8 byte-order mark at the start is skipped; white space around an entry is dropped; blank lines and
/// lines starting with `#` are skipped, and a `#` after white space starts a comment (a `#` inside a URL, as in
/// `page.html#top`, is part of it). Thread-safety: a pure function.
public enum ListText {
    /// One entry: its 1-based line number and its text.
    public struct Entry: Sendable, Equatable {
        /// The line it is on, counting from 1 (for messages: `FILE:LINE`).
        public var line: Int
        /// The entry, without surrounding white space or a trailing comment.
        public var text: String

        /// An entry on `line`.
        public init(line: Int, text: String) {
            self.line = line
            self.text = text
        }
    }

    /// The entries of `text`, in order.
    public static func entries(_ text: String) -> [Entry] {
        var scalars = Substring(text).unicodeScalars[...]
        if scalars.first == "\u{FEFF}" { scalars = scalars.dropFirst() }
        var entries: [Entry] = []
        var line = 0
        var current = String.UnicodeScalarView()
        var index = scalars.startIndex
        func finishLine() {
            line += 1
            if let entry = entry(String(current)) { entries.append(Entry(line: line, text: entry)) }
            current = String.UnicodeScalarView()
        }
        while index < scalars.endIndex {
            let scalar = scalars[index]
            index = scalars.index(after: index)
            switch scalar {
            case "\n":
                finishLine()
            case "\r":
                if index < scalars.endIndex, scalars[index] == "\n" { index = scalars.index(after: index) }
                finishLine()
            default:
                current.append(scalar)
            }
        }
        if !current.isEmpty { finishLine() }
        return entries
    }

    /// A line's entry: nil for a blank or comment line; otherwise the text before any comment, trimmed. A comment
    /// starts at a `#` that begins the line or follows white space.
    private static func entry(_ line: String) -> String? {
        var text = Substring(line)
        if let hash = text.indices.first(where: { index in
            text[index] == "#" && (index == text.startIndex || text[text.index(before: index)].isWhitespace)
        }) {
            text = text[..<hash]
        }
        let trimmed = String(text).trimmingWhitespace()
        return trimmed.isEmpty ? nil : trimmed
    }
}

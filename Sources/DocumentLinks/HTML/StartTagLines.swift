/// The lines where an element's start tag begins and ends, found in the page's bytes.
///
/// libxml2 numbers an element by the line where its start tag ends, so a tag written over several lines gets its
/// last line; and its HTML parser (2.9.14) ignores XML_PARSE_BIG_LINES, so every line past 65535 is 65535. This scanner
/// walks the page once, in document order, past comments: for each element asked about it finds the next `<name` and
/// gives the lines of its `<` and of its `>` (or libxml2's line, when no such tag is found at or before it).
struct StartTagLines {
    /// libxml2's line of any element past this line.
    static let saturatedLine = 65535

    private let bytes: [UInt8]
    private let lineIndex: LineIndex
    private var cursor = 0
    /// The last search for each name: the cursor it started from and what it found (see `next(named:)`).
    private var searched: [String: (from: Int, found: (after: Int, line: Int)?)] = [:]

    /// A scanner of `bytes`, from the start.
    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        lineIndex = LineIndex(bytes)
    }

    /// The lines where the next `<name` start tag begins and ends, if it begins at or before `reported` (libxml2's
    /// line of the element, which may be saturated); `reported` for both otherwise (an element libxml2 implied, or one
    /// the scanner cannot see).
    mutating func startTag(named name: String, reportedLine reported: Int) -> (start: Int, end: Int) {
        guard let found = next(named: name) else { return (reported, reported) }
        guard found.line <= reported || reported >= Self.saturatedLine else { return (reported, reported) }
        cursor = found.after
        return (found.line, lineIndex.line(ofOffset: end(ofTagFrom: found.after)))
    }

    /// The next `<name` start tag at or after the cursor: the offset after its name, and the line of its `<`; nil when
    /// there is none. Each search is kept with the cursor it started from, so an element libxml2 made of text this
    /// scanner does not read as a tag (`<img,>`) costs one search, not a search of the rest of the page each time.
    private mutating func next(named name: String) -> (after: Int, line: Int)? {
        if let known = searched[name], known.from == cursor { return known.found }
        let wanted = Array(name.utf8)
        var offset = cursor
        var found: (after: Int, line: Int)?
        while offset < bytes.count, found == nil {
            guard bytes[offset] == UInt8(ascii: "<") else { offset += 1; continue }
            if bytes.matchesLowercased(Array("<!--".utf8), at: offset) {
                offset = end(ofCommentAt: offset)
                continue
            }
            let nameStart = offset + 1
            if bytes.matchesLowercased(wanted, at: nameStart) {
                let after = nameStart + wanted.count
                if after >= bytes.count || [0x20, 0x09, 0x0A, 0x0D, 0x0C, UInt8(ascii: "/"), UInt8(ascii: ">")].contains(bytes[after]) {
                    found = (after, lineIndex.line(ofOffset: offset))
                }
            }
            offset += 1
        }
        searched[name] = (cursor, found)
        return found
    }

    /// The offset of the `>` that ends the tag whose attributes start at `offset` (quoted values may hold `>`).
    private func end(ofTagFrom offset: Int) -> Int {
        var position = offset
        var quote: UInt8?
        while position < bytes.count {
            let byte = bytes[position]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                return position
            }
            position += 1
        }
        return max(0, bytes.count - 1)
    }

    private func end(ofCommentAt offset: Int) -> Int {
        var position = offset + 4
        while position + 2 < bytes.count {
            if bytes[position] == UInt8(ascii: "-"), bytes[position + 1] == UInt8(ascii: "-"), bytes[position + 2] == UInt8(ascii: ">") {
                return position + 3
            }
            position += 1
        }
        return bytes.count
    }
}

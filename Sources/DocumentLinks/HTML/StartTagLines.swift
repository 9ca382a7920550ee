/// The line where an element's start tag begins, found in the page's bytes.
///
/// libxml2 numbers an element by the line where its start tag ends, so a tag written over several lines gets its
/// last line. This scanner walks the page once, in document order, past comments: for each element asked about it finds
/// the next `<name` and gives its line (or libxml2's, when no such tag is found at or before it).
struct StartTagLines {
    private let bytes: [UInt8]
    private let lineIndex: LineIndex
    private var cursor = 0

    /// A scanner of `bytes`, from the start.
    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        lineIndex = LineIndex(bytes)
    }

    /// The line where the next `<name` start tag begins, if that is at or before `reported` (libxml2's line of the
    /// element); `reported` otherwise (an element libxml2 implied, or one the scanner cannot see).
    mutating func startLine(ofTag name: String, endingOnLine reported: Int) -> Int {
        let wanted = Array(name.utf8)
        var offset = cursor
        while offset < bytes.count {
            guard bytes[offset] == UInt8(ascii: "<") else { offset += 1; continue }
            if bytes.matchesLowercased(Array("<!--".utf8), at: offset) {
                offset = end(ofCommentAt: offset)
                continue
            }
            let nameStart = offset + 1
            if bytes.matchesLowercased(wanted, at: nameStart) {
                let after = nameStart + wanted.count
                if after >= bytes.count || [0x20, 0x09, 0x0A, 0x0D, 0x0C, UInt8(ascii: "/"), UInt8(ascii: ">")].contains(bytes[after]) {
                    let line = lineIndex.line(ofOffset: offset)
                    guard line <= reported else { return reported }
                    cursor = after
                    return line
                }
            }
            offset += 1
        }
        return reported
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

/// The images a style sheet references: `url(...)`, quoted or not, and the string arguments of `image-set(...)`
/// (`-webkit-image-set` too), with their lines. Comments are skipped, and so are `@import` rules and `@font-face`
/// blocks: what they load is a style sheet or a font, not an image.
///
/// A scanner, not a CSS parser: no CSS parser is in the package mirror or Debian's C libraries, and these few tokens
/// are all that is needed.
struct CSSImageExtractor {
    /// The bytes of the style sheet (a file, a `<style>` element or a `style` attribute).
    let bytes: [UInt8]
    /// The line of the document where `bytes` start.
    let firstLine: Int
    /// The context of `url()` references (`css url()`, `style url()`); `image-set` strings get `… image-set()`.
    let context: String

    private var position = 0
    private var line: Int

    /// A scanner of `text`, which starts at `firstLine` of its document; `origin` is `css` or `style`.
    init(_ text: some StringProtocol, firstLine: Int, origin: String) {
        bytes = Array(text.utf8)
        self.firstLine = firstLine
        context = origin
        line = firstLine
    }

    /// Adds every image reference of the text to `collector`.
    mutating func extract(into collector: inout ReferenceCollector) {
        var depth = 0
        var fontFaceDepth: Int?  // the brace depth inside the @font-face block being skipped
        var fontFacePending = false
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "/"), peek(1) == UInt8(ascii: "*") {
                skipComment()
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                _ = readString()
            } else if byte == UInt8(ascii: "{") {
                depth += 1
                if fontFacePending { fontFaceDepth = depth; fontFacePending = false }
                advance()
            } else if byte == UInt8(ascii: "}") {
                if fontFaceDepth == depth { fontFaceDepth = nil }
                depth -= 1
                advance()
            } else if byte == UInt8(ascii: "@"), matchesKeyword("@import") {
                skipImport()
            } else if byte == UInt8(ascii: "@"), matchesKeyword("@font-face") {
                fontFacePending = true
                advance(count: "@font-face".utf8.count)
            } else if isFunctionStart("url(") {
                let start = line
                if let url = readURLFunction(), fontFaceDepth == nil { collector.add(url, line: start, context: "\(context) url()") }
            } else if isFunctionStart("image-set(") || isFunctionStart("-webkit-image-set(") {
                readImageSet(into: &collector, skipping: fontFaceDepth != nil)
            } else {
                advance()
            }
        }
    }

    // MARK: - Tokens

    private func peek(_ ahead: Int) -> UInt8? {
        position + ahead < bytes.count ? bytes[position + ahead] : nil
    }

    private mutating func advance(count: Int = 1) {
        for _ in 0..<count where position < bytes.count {
            if bytes[position] == UInt8(ascii: "\n") || (bytes[position] == UInt8(ascii: "\r") && peek(1) != UInt8(ascii: "\n")) {
                line += 1
            }
            position += 1
        }
    }

    private func isIdentifierByte(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte >= 0x80
            || (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    /// Whether the function `name(` starts here and not in the middle of a longer name.
    private func isFunctionStart(_ name: String) -> Bool {
        (position == 0 || !isIdentifierByte(bytes[position - 1])) && bytes.matchesLowercased(Array(name.utf8), at: position)
    }

    private func matchesKeyword(_ keyword: String) -> Bool {
        let end = position + keyword.utf8.count
        return bytes.matchesLowercased(Array(keyword.utf8), at: position) && (end >= bytes.count || !isIdentifierByte(bytes[end]))
    }

    private mutating func skipComment() {
        advance(count: 2)
        while position < bytes.count, !(bytes[position] == UInt8(ascii: "*") && peek(1) == UInt8(ascii: "/")) { advance() }
        advance(count: 2)
    }

    private mutating func skipWhiteSpace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D, 0x0C].contains(bytes[position]) { advance() }
    }

    /// Reads a quoted string at `position` (escapes kept as written, a line break ends it unclosed).
    private mutating func readString() -> String {
        let quote = bytes[position]
        advance()
        let start = position
        while position < bytes.count, bytes[position] != quote, bytes[position] != UInt8(ascii: "\n") {
            if bytes[position] == UInt8(ascii: "\\") { advance() }
            advance()
        }
        let value = String(decoding: bytes[start..<min(position, bytes.count)], as: UTF8.self)
        if position < bytes.count, bytes[position] == quote { advance() }
        return value
    }

    /// Skips an `@import` rule, to its `;`.
    private mutating func skipImport() {
        while position < bytes.count, bytes[position] != UInt8(ascii: ";") {
            if bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'") { _ = readString() } else { advance() }
        }
        advance()
    }

    /// Reads `url(...)` at `position`: its argument, or nil when it is empty.
    private mutating func readURLFunction() -> String? {
        advance(count: 4)
        skipWhiteSpace()
        var value: String
        if position < bytes.count, bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'") {
            value = readString()
            while position < bytes.count, bytes[position] != UInt8(ascii: ")") { advance() }
        } else {
            let start = position
            while position < bytes.count, bytes[position] != UInt8(ascii: ")") { advance() }
            value = String(decoding: bytes[start..<position], as: UTF8.self).trimmingASCIIWhiteSpace
        }
        advance()
        return value.isEmpty ? nil : value
    }

    /// Reads `image-set(...)` at `position`, adding its strings and `url()`s.
    private mutating func readImageSet(into collector: inout ReferenceCollector, skipping: Bool) {
        while bytes[position] != UInt8(ascii: "(") { advance() }
        advance()
        var depth = 1
        while position < bytes.count, depth > 0 {
            let byte = bytes[position]
            if byte == UInt8(ascii: "/"), peek(1) == UInt8(ascii: "*") {
                skipComment()
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                let start = line
                let value = readString()
                if depth == 1, !skipping { collector.add(value, line: start, context: "\(context) image-set()") }
            } else if isFunctionStart("url(") {
                let start = line
                if let url = readURLFunction(), !skipping { collector.add(url, line: start, context: "\(context) url()") }
            } else {
                if byte == UInt8(ascii: "(") { depth += 1 }
                if byte == UInt8(ascii: ")") { depth -= 1 }
                advance()
            }
        }
    }
}

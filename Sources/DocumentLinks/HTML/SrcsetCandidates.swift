/// The image candidate URLs of a `srcset` attribute, parsed as the HTML standard's "parse a srcset attribute" does:
/// a URL runs to the next white space (so it may contain commas), trailing commas end it, and descriptors run to the
/// next comma outside parentheses.
enum SrcsetCandidates {
    /// The URLs of `srcset`, in order; descriptors are dropped.
    static func urls(in srcset: String) -> [String] {
        let characters = Array(srcset.unicodeScalars)
        func isSpace(_ c: Unicode.Scalar) -> Bool { c == " " || c == "\t" || c == "\n" || c == "\r" || c == "\u{0C}" }
        var position = 0
        var urls: [String] = []
        while true {
            // Splitting loop: skip white space and commas.
            while position < characters.count, isSpace(characters[position]) || characters[position] == "," { position += 1 }
            guard position < characters.count else { return urls }
            let start = position
            while position < characters.count, !isSpace(characters[position]) { position += 1 }
            var url = String(String.UnicodeScalarView(characters[start..<position]))
            if url.hasSuffix(",") {
                // A URL ending with commas has no descriptors.
                while url.hasSuffix(",") { url.removeLast() }
            } else {
                // Descriptor tokenizer: up to a comma outside parentheses.
                var inParentheses = false
                while position < characters.count {
                    let c = characters[position]
                    if inParentheses {
                        if c == ")" { inParentheses = false }
                    } else if c == "(" {
                        inParentheses = true
                    } else if c == "," {
                        position += 1
                        break
                    }
                    position += 1
                }
            }
            if !url.isEmpty { urls.append(url) }
        }
    }
}

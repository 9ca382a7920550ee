import Foundation
import ImageCore

/// `thumbnail -o`: a folder, or a file-name pattern as `vipsthumbnail -o` takes; the one place a thumbnail's output
/// path is derived from its input.
///
/// A value without `%` is a folder: `DIR/<name>.<ext>`. A value with `%` is a pattern: `%s` is the input's file name
/// without its extension, `%e` the output's extension (`jpg`, `png` or `webp`), `%%` a `%`. A pattern that does not end
/// in `%e` ends in `.jpg`, `.jpeg`, `.png` or `.webp`, and that extension chooses the output format, as in
/// vipsthumbnail. Relative paths are relative to the working directory (vipsthumbnail's are relative to each input's
/// folder). A file found in a subfolder of a folder argument keeps that subfolder: `DIR/sub/<name>.<ext>`, or the
/// pattern's file name inside `sub/` under the pattern's folder.
struct ThumbnailOutputPattern: Sendable, Equatable {
    /// A piece of a pattern.
    enum Piece: Sendable, Equatable {
        /// Text copied as it is.
        case literal(String)
        /// `%s`: the input's name without its extension.
        case name
        /// `%e`: the output's extension.
        case fileExtension
    }

    /// The value of `-o` as given.
    let text: String
    /// The pattern's pieces; nil when `text` is a folder.
    let pieces: [Piece]?
    /// The format the pattern's literal extension chooses (`thumbs/%s.webp`); nil for a folder or a pattern ending in `%e`.
    let impliedFormat: ImageProcessing.OutputFormat?

    /// Parses `text`.
    ///
    /// - Throws: `InputError` naming the value and what is wrong: an unknown `%` sequence, or a pattern whose
    ///   extension is neither `%e` nor one of the output formats'.
    init(_ text: String) throws(InputError) {
        self.text = text
        guard text.contains("%") else {
            (pieces, impliedFormat) = (nil, nil)
            return
        }
        var pieces: [Piece] = []
        var literal = ""
        var characters = text.makeIterator()
        while let character = characters.next() {
            guard character == "%" else {
                literal.append(character)
                continue
            }
            switch characters.next() {
            case "%": literal.append("%")
            case let code where code == "s" || code == "e":
                if !literal.isEmpty { pieces.append(.literal(literal)) }
                literal = ""
                pieces.append(code == "s" ? .name : .fileExtension)
            case let other:
                throw InputError("--output '\(text)': unknown \(other.map { "%\($0)" } ?? "% at the end"); a pattern takes %s (the "
                                 + "input's name without extension), %e (the output's extension) and %% (a %)")
            }
        }
        if !literal.isEmpty { pieces.append(.literal(literal)) }
        self.pieces = pieces
        if pieces.last == .fileExtension {
            impliedFormat = nil
        } else if case .literal(let tail) = pieces.last, !tail.contains("/"), let dot = tail.lastIndex(of: "."),
                  let format = Self.format(ofExtension: String(tail[tail.index(after: dot)...])) {
            impliedFormat = format
        } else {
            throw InputError("--output '\(text)': a pattern ends in .%e (the output's extension) or in .jpg, .png or .webp "
                             + "(which chooses the format), as in 'thumbs/%s-64.%e'")
        }
    }

    /// Where the thumbnail of `input` goes, encoded as `format`; `subfolder` is the folder of `input` inside the folder
    /// argument it was found in ("" for a file given as it is).
    func path(for input: String, subfolder: String, format: ImageFormat) -> String {
        let name = ((input as NSString).lastPathComponent as NSString).deletingPathExtension
        let fileExtension = format == .jpeg ? "jpg" : format.rawValue
        guard let pieces else {
            return join(text, subfolder, name + "." + fileExtension)
        }
        let expanded = pieces.map { piece in
            switch piece {
            case .literal(let literal): literal
            case .name: name
            case .fileExtension: fileExtension
            }
        }.joined()
        guard !subfolder.isEmpty else { return expanded }
        guard let slash = expanded.lastIndex(of: "/") else { return join(subfolder, expanded) }
        return join(String(expanded[...slash]), subfolder, String(expanded[expanded.index(after: slash)...]))
    }

    /// `parts` joined by single slashes, empty parts left out.
    private func join(_ parts: String...) -> String {
        var path = ""
        for part in parts where !part.isEmpty {
            if path.isEmpty || path.hasSuffix("/") { path += part } else { path += "/" + part }
        }
        return path
    }

    /// The output format an extension names (`jpg` and `jpeg` alike, any case), nil for any other.
    static func format(ofExtension fileExtension: String) -> ImageProcessing.OutputFormat? {
        ImageProcessing.OutputFormat(name: fileExtension)
    }
}

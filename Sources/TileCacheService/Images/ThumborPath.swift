import Foundation
import HTTPTypes
import ImageCore

/// A thumbor URL's path, read as thumbor reads it (libthumbor's `Url.regex`, thumbor's `transformer.py` and
/// `handlers/imaging.py`): `/unsafe/...` or `/{signature}/...` with
/// `[trim/][AxB:CxD/][fit-in/][-]WxH/[halign/][valign/][smart/][filters:name(args):name(args)/]{source}`.
///
/// Supported: `meta` (thumbor's JSON of the operations, `metaJSON`), `trim` (with its reference pixel and tolerance), manual crops (`AxB:CxD`), sizes (`0` for proportional, `-` for flips), `fit-in`, `full-fit-in`,
/// `adaptive-fit-in` (and `adaptive-full-fit-in`), `halign`/`valign`, `smart` (centred on the image's point of
/// attention, libvips' attention strategy: thumbor's face and feature detectors are not run), and the filters
/// `format()` (jpeg, png, webp, avif), `quality()`, `fill(colour[,transparent])` (a CSS name, hex digits,
/// `transparent`, `auto` or `blur`), `max_bytes()`, `no_upscale()`, `strip_icc()` and `strip_exif()` (outputs never carry either). What
/// thumbor has and TileCache does not do yet (`debug`, `orig`, `meta` with `smart` or `trim`, and any other filter) is refused by name, 400 as thumbor refuses a URL it cannot read: never ignored.
struct ThumborPath: Sendable {
    /// The signature segment, or nil for `unsafe`.
    var signature: Substring?
    /// What thumbor signs: the path after `/{signature}/`.
    var signedPath: Substring
    var source: String
    var processing: ImageProcessing
    /// `meta/`: the answer is thumbor's JSON of what would be done (`metaJSON`), not the image.
    var meta = false
    /// The source as written in the path (thumbor's `image_url`, which `meta` reports percent-encoded).
    var rawSource = ""
    /// The alignment as written (`left`, `center`, `right`; `top`, `middle`, `bottom`): `meta`'s focal point.
    var alignment = (horizontal: "center", vertical: "middle")

    /// A URL thumbor would refuse, or one asking for what TileCache does not do yet: 400 `invalid-url`.
    static func invalid(_ message: String) -> ServiceError {
        ServiceError(.badRequest, reason: .invalidURL, message: message)
    }

    /// Whether `path` is a thumbor URL: it starts with `/unsafe/` or with a thumbor signature (HMAC-SHA1 in URL-safe
    /// base64 with its padding: 28 characters ending in `=`).
    static func looksLikeThumbor(_ path: String) -> Bool {
        let first = path.dropFirst().prefix { $0 != "/" }
        return first == "unsafe" || (first.count == 28 && first.hasSuffix("=") && first.dropLast().allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    }

    /// Reads `path` (as received).
    init(_ path: String) throws(ServiceError) {
        var rest = Substring(path)
        if rest.hasPrefix("/") { rest = rest.dropFirst() }
        guard let slash = rest.firstIndex(of: "/") else { throw Self.invalid("No original image was specified in the given URL") }
        let first = rest[..<slash]
        signature = first == "unsafe" ? nil : first
        signedPath = rest[rest.index(after: slash)...]
        var segments = signedPath.split(separator: "/", omittingEmptySubsequences: false)[...]
        func take(_ matches: (Substring) -> Bool) -> Substring? {
            guard let segment = segments.first, segments.count > 1, matches(segment) else { return nil }
            segments.removeFirst()
            return segment
        }
        if take({ $0 == "debug" }) != nil { throw Self.invalid("thumbor's debug is not supported by TileCache yet") }
        meta = take({ $0 == "meta" }) != nil
        var trim: ImageProcessing.Trim?
        if let text = take({ $0.wholeMatch(of: /trim(:(top-left|bottom-right))?(:\d+)?/) != nil }) {
            // trim[:top-left|:bottom-right][:tolerance]: the reference pixel and how far a colour may be from it.
            let parts = text.split(separator: ":").dropFirst()
            var value = ImageProcessing.Trim()
            for part in parts {
                if part == "bottom-right" { value.fromBottomRight = true } else if let tolerance = Int(part) { value.tolerance = min(tolerance, 1 << 16) }
            }
            trim = value
        }
        var sourceCrop: ImageProcessing.SourceCrop?
        if let crop = take({ $0.wholeMatch(of: /\d+x\d+:\d+x\d+/) != nil }) {
            // left x top : right x bottom, in source pixels; all zero is no crop (thumbor's should_crop).
            let numbers = crop.split(whereSeparator: { $0 == "x" || $0 == ":" }).map { Int($0) ?? Int.max }
            guard numbers.allSatisfy({ $0 <= 1 << 20 }) else { throw Self.invalid("the crop \(crop.prefix(60)) is beyond any image") }
            if numbers.contains(where: { $0 > 0 }) {
                sourceCrop = .init(left: numbers[0], top: numbers[1], right: numbers[2], bottom: numbers[3])
            }
        }
        var fitIn = false, full = false, adaptive = false
        if let fit = take({ $0.wholeMatch(of: /(adaptive-)?(full-)?fit-in/) != nil }) {
            (fitIn, full, adaptive) = (true, fit.contains("full-"), fit.hasPrefix("adaptive-"))
        }
        var width = 0, height = 0, flipHorizontal = false, flipVertical = false
        if let size = take({ $0.wholeMatch(of: /-?(\d+|orig)?x-?(\d+|orig)?/) != nil }) {
            guard !size.contains("orig") else { throw Self.invalid("orig sizes are not supported by TileCache yet") }
            let sides = size.split(separator: "x", omittingEmptySubsequences: false)
            (flipHorizontal, flipVertical) = (sides[0].hasPrefix("-"), sides[1].hasPrefix("-"))
            let widthText = sides[0].drop { $0 == "-" }, heightText = sides[1].drop { $0 == "-" }
            guard let w = widthText.isEmpty ? 0 : Int(widthText), let h = heightText.isEmpty ? 0 : Int(heightText),
                  w <= ImageProcessing.maxSide, h <= ImageProcessing.maxSide else {
                throw ServiceError(.badRequest, reason: .outputTooLarge, message: "\(size.prefix(40)) is above the limit of \(ImageProcessing.maxSide) pixels a side")
            }
            (width, height) = (w, h)
        }
        var horizontal = "center", vertical = "middle"
        if let align = take({ ["left", "right", "center"].contains($0) }) { horizontal = String(align) }
        if let align = take({ ["top", "bottom", "middle"].contains($0) }) { vertical = String(align) }
        let smart = take({ $0 == "smart" }) != nil
        var format: ImageProcessing.OutputFormat?
        var quality: Int?
        var upscale = true
        var fill: ImageProcessing.Canvas?, fillUnderTransparency = false, maxBytes: Int?
        if let filters = take({ $0.hasPrefix("filters:") && $0.hasSuffix(")") }) {
            for filter in try Self.filters(filters.dropFirst("filters:".count)) {
                switch (filter.name, filter.arguments) {
                case ("format", let arguments):
                    guard let named = ImageProcessing.OutputFormat(name: arguments) else {
                        throw Self.invalid("format(\(arguments.prefix(20))) is not supported by TileCache (\(ImageProcessing.OutputFormat.names))")
                    }
                    format = named
                case ("quality", let arguments):
                    guard let value = Int(arguments), (0...100).contains(value) else { throw Self.invalid("quality(\(arguments.prefix(20))) must be 0 to 100") }
                    quality = value == 0 ? nil : value
                case ("no_upscale", ""): upscale = false
                case ("fill", let arguments):
                    let parts = arguments.split(separator: ",", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                    let name = parts.first ?? ""
                    switch name.lowercased() {
                    case "auto": fill = .meanColor
                    case "blur": fill = .blurredImage
                    case "transparent": fill = .color(.transparent)
                    default:
                        guard let color = ImageProcessing.Color(name: name) else {
                            throw Self.invalid("fill(\(arguments.prefix(40))): '\(name.prefix(40))' is not a colour (a CSS name, hex digits, transparent, auto or blur)")
                        }
                        fill = .color(color)
                    }
                    if parts.count == 2 {
                        switch parts[1].lowercased() {
                        case "true", "1": fillUnderTransparency = true
                        case "false", "0": fillUnderTransparency = false
                        default: throw Self.invalid("fill(\(arguments.prefix(40))): '\(parts[1].prefix(20))' is not True or False")
                        }
                    }
                case ("max_bytes", let arguments):
                    guard let value = Int(arguments), value > 0 else { throw Self.invalid("max_bytes(\(arguments.prefix(20))) must be a positive number") }
                    maxBytes = value
                case ("strip_icc", ""), ("strip_exif", ""): break  // outputs never carry a profile or EXIF: the same bytes
                default: throw Self.invalid("the filter \(filter.name.prefix(40)) is not supported by TileCache yet")
                }
            }
        }
        let source = segments.joined(separator: "/")
        rawSource = source
        alignment = (horizontal, vertical)
        if meta, trim != nil || smart {
            throw Self.invalid("meta with \(smart ? "smart" : "trim") is not supported by TileCache yet (both depend on the pixels)")
        }
        guard !source.isEmpty else { throw Self.invalid("No original image was specified in the given URL") }
        // thumbor's sources are usually written without a scheme (`s.glbimg.com/et/a.jpg`): http is meant.
        let decoded = source.removingPercentEncoding ?? source
        self.source = RequestURL.isHTTP(decoded) ? decoded : "http://" + decoded
        let aligned: ImageProcessing.Gravity = switch (horizontal, vertical) {
        case ("left", "top"): .init(.northWest)
        case ("right", "top"): .init(.northEast)
        case ("left", "bottom"): .init(.southWest)
        case ("right", "bottom"): .init(.southEast)
        case ("left", _): .init(.west)
        case ("right", _): .init(.east)
        case (_, "top"): .init(.north)
        case (_, "bottom"): .init(.south)
        default: .centre
        }
        let gravity: ImageProcessing.Gravity = smart ? .init(.smart) : aligned
        // thumbor's geometry in TileCache's terms. fit-in: inside the box, never enlarged. Otherwise the source is
        // cropped to the box's shape around the alignment and resized to the box exactly, enlarged when smaller;
        // `no_upscale()` first cuts each side of the box to the source's.
        processing = ImageProcessing(width: width > 0 ? width : nil, height: height > 0 ? height : nil,
                                     fit: fitIn ? .inside : .cover, enlarge: !fitIn, quality: quality, format: format,
                                     gravity: fitIn ? .centre : gravity)
        processing.boxCappedToSource = !fitIn && !upscale
        processing.cropRule = .thumbor
        (processing.sourceCrop, processing.fitInFull, processing.fitInAdaptive) = (sourceCrop, full, adaptive)
        processing.trim = trim
        (processing.flipHorizontal, processing.flipVertical) = (flipHorizontal, flipVertical)
        (processing.canvas, processing.canvasUnderTransparency, processing.maxBytes) = (fill, fill != nil && fillUnderTransparency, maxBytes)
    }

    /// `name(args):name(args)`, split where thumbor splits them.
    private static func filters(_ text: Substring) throws(ServiceError) -> [(name: String, arguments: String)] {
        var result: [(String, String)] = []
        var rest = text
        while !rest.isEmpty {
            guard let open = rest.firstIndex(of: "("), let close = rest[open...].firstIndex(of: ")") else {
                throw invalid("filters must be written name(arguments): \(text.prefix(80))")
            }
            result.append((String(rest[..<open]), String(rest[rest.index(after: open)..<close])))
            rest = rest[rest.index(after: close)...]
            if rest.hasPrefix(":") { rest = rest.dropFirst() } else if !rest.isEmpty { throw invalid("filters must be separated by ':': \(text.prefix(80))") }
        }
        return result
    }

    /// thumbor's signature of `signedPath`: URL-safe base64, with padding, of HMAC-SHA1(key, path).
    static func signature(_ signedPath: Substring, key: [UInt8]) -> String {
        URLSigner.base64URL(Hashing.hmacSHA1(key: key, message: Array(signedPath.utf8)), padded: true)
    }

    /// Checks the URL as thumbor does: `unsafe` only when allowed, a signature only when it matches (both 400).
    func verify(key: [UInt8]?, allowsUnsafe: Bool) throws(ServiceError) {
        guard let signature else {
            guard allowsUnsafe else { throw Self.invalid("URL has unsafe but unsafe is not allowed by the config") }
            return
        }
        guard let key else { throw Self.invalid("URL is signed but this service has no thumbor security key (--thumbor-key)") }
        let given = signature.removingPercentEncoding ?? String(signature)
        guard ConstantTime.equal(Array(Self.signature(signedPath, key: key).utf8), Array(given.utf8)) else {
            throw Self.invalid("Malformed URL: the signature does not match")
        }
    }
}

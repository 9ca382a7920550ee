import Foundation
import HTTPTypes
import ImageCore

/// An imgproxy URL's path, read as imgproxy reads it (its options/parser and handlers/path.go, v3 and v4):
/// `/{signature}/{option}/{option}/.../plain/{percent-encoded source}@{extension}` or
/// `/{signature}/{options}/{base64url source, may be split by /}.{extension}`, and `/info/...` for the original's
/// metadata. An option is `name:arg:arg`; the first segment without `:` starts the source.
///
/// Supported options, with imgproxy's names, short forms, argument order and defaults: `resize`/`rs`, `size`/`s`,
/// `resizing_type`/`rt` (`fit`, `fill`, `fill-down`, `force`, `auto`), `width`/`w`, `height`/`h`, `min-width`/`mw`,
/// `min-height`/`mh`, `crop`/`c`, `extend`/`ex`, `background`/`bg`, `dpr`,
/// `enlarge`/`el`, `gravity`/`g` (the compass, `ce`, offsets, `fp:x:y`, `sm`), `quality`/`q`, `format`/`f`/`ext`,
/// `strip_metadata`/`sm` (outputs never carry metadata), `cachebuster`/`cb`, `expires`/`exp`, `preset`/`pr`. Any other
/// option, and an option imgproxy knows that TileCache does not do yet (`flip`, `rotate`, `padding`, ...), is refused as imgproxy refuses an unknown one: 404, never ignored.
struct ImgproxyPath: Sendable {
    /// The signature segment.
    var signature: Substring
    /// What the signature covers: the path after the signature segment, from its `/` (`/rs:fill:300:400/plain/...`),
    /// as imgproxy re-denormalises it (`%3A` in options read as `:`, `http:/host` in a plain source as `http://host`).
    var signedPath: String
    /// The source URL.
    var source: String
    /// `/info/...`: the original's metadata, not an image.
    var info: Bool
    /// What to make of the source.
    var processing: ImageProcessing
    /// Whether the output format was left to `Accept`.
    var negotiated: Bool
    /// `f:blurhash`, `f:thumbhash` or `f:placeholder` (`@blurhash`, ...): the placeholder of the variant the other
    /// options make, as TileCache's own URLs answer it (`processing` makes it); nil for an image.
    var placeholder: ImageOptions.PlaceholderForm?
    /// The URL carries a cache buster (`cb:`), which a front end changes when the source changes: the answer may be
    /// kept as immutable (`Cache-Control: ..., immutable`), since this URL will not come to mean another image.
    var immutable: Bool

    /// A path imgproxy would refuse: 404 "Invalid URL", with what is wrong.
    static func invalid(_ message: String) -> ServiceError {
        ServiceError(.notFound, reason: .invalidURL, message: message)
    }

    /// Splits `path` (as received, percent-encoding and all) into its signature and the signed rest; nil when it has
    /// no signature segment and rest.
    static func split(_ path: String) -> (info: Bool, signature: Substring, signedPath: String)? {
        var rest = Substring(path)
        if rest.hasPrefix("/") { rest = rest.dropFirst() }
        var info = false
        if rest.hasPrefix("info/") {
            info = true
            rest = rest.dropFirst(5)
        }
        guard let slash = rest.firstIndex(of: "/"), slash > rest.startIndex, rest.index(after: slash) < rest.endIndex else { return nil }
        return (info, rest[..<slash], "/" + redenormalised(rest[rest.index(after: slash)...]))
    }

    /// imgproxy's `RedenormalizePath`: undoes what browsers and proxies do to paths (`%3A` for `:` in the options,
    /// `scheme:/` for `scheme://` at the start of a plain source).
    static func redenormalised(_ path: Substring) -> String {
        let options: Substring, plain: Substring?
        if path.hasPrefix("plain/") {
            (options, plain) = ("", path.dropFirst(6))
        } else if let range = path.range(of: "/plain/") {
            (options, plain) = (path[..<range.lowerBound], path[range.upperBound...])
        } else {
            (options, plain) = (path, nil)
        }
        let fixedOptions = options.replacingOccurrences(of: "%3A", with: ":")
        guard var source = plain.map(String.init) else { return fixedOptions.hasPrefix("/") ? String(fixedOptions.dropFirst()) : fixedOptions }
        if let colon = source.firstIndex(of: ":"), source[..<colon].allSatisfy({ !$0.isWhitespace && $0 != "/" }), colon > source.startIndex {
            let after = source[source.index(after: colon)...]
            if after.hasPrefix("/"), !after.hasPrefix("//"), after.count > 1 {
                source = String(source[..<colon]) + "://" + after.dropFirst()
            }
        }
        let joined = fixedOptions + "/plain/" + source
        return joined.hasPrefix("/") ? String(joined.dropFirst()) : joined
    }

    /// Reads a signed path (`signedPath` of `split`). With `negotiation` (imgproxy's `IMGPROXY_AUTO_AVIF` and
    /// `IMGPROXY_AUTO_WEBP`), a client whose `Accept` names AVIF or WebP gets it when the URL names no format;
    /// otherwise the output keeps JPEG (PNG for a source with alpha).
    ///
    /// - Parameters:
    ///   - presets: imgproxy presets by name, each a list of options (`rs:fit:128:128/q:70` read as imgproxy's).
    ///   - now: the time `expires` is compared with.
    init(signature: Substring, signedPath: String, info: Bool, accept: String?,
         negotiation: FormatNegotiation = FormatNegotiation(avif: false, webp: false),
         presets: [String: [(String, [String])]] = [:], now: Date = Date()) throws(ServiceError) {
        (self.signature, self.signedPath, self.info) = (signature, signedPath, info)
        let parts = signedPath.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        var options = Options()
        var index = parts.startIndex
        while index < parts.endIndex, parts[index].contains(":") {
            let fields = parts[index].split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            try options.apply(name: fields[0], arguments: Array(fields.dropFirst()), presets: presets, now: now, depth: 0)
            index += 1
        }
        let (source, fileExtension) = try Self.source(parts[index...])
        if let fileExtension { try options.apply(name: "format", arguments: [fileExtension], presets: [:], now: now, depth: 0) }
        self.source = source
        (processing, negotiated) = try options.processing(accept: accept, negotiation: negotiation)
        placeholder = options.placeholder
        immutable = options.cacheBuster != nil
    }

    /// The source URL and the extension after it (`@png`, `.png`).
    private static func source(_ parts: ArraySlice<Substring>) throws(ServiceError) -> (String, String?) {
        guard let first = parts.first, !first.isEmpty else { throw invalid("Image URL is empty") }
        if first == "plain", parts.count > 1 {
            let encoded = parts.dropFirst().joined(separator: "/")
            let pieces = encoded.split(separator: "@", omittingEmptySubsequences: false)
            guard !pieces[0].isEmpty else { throw invalid("Image URL is empty") }
            guard pieces.count <= 2 else { throw invalid("Multiple formats are specified: \(encoded.prefix(200))") }
            guard let url = pieces[0].removingPercentEncoding else { throw invalid("Invalid url encoding: \(encoded.prefix(200))") }
            return (url, pieces.count == 2 && !pieces[1].isEmpty ? String(pieces[1]) : nil)
        }
        let encoded = parts.joined()
        let pieces = encoded.split(separator: ".", omittingEmptySubsequences: false)
        guard !pieces[0].isEmpty else { throw invalid("Image URL is empty") }
        guard pieces.count <= 2 else { throw invalid("Multiple formats are specified: \(encoded.prefix(200))") }
        guard let data = URLSigner.base64URLDecoded(String(pieces[0])), let url = String(data: data, encoding: .utf8) else {
            throw invalid("Invalid url encoding: \(encoded.prefix(200))")
        }
        return (url, pieces.count == 2 && !pieces[1].isEmpty ? String(pieces[1]) : nil)
    }

    /// The service's presets (`--presets`, written as queries: `w=128&format=webp&fit=cover`) as imgproxy options
    /// (`w:128`, `format:webp`, `rt:fill-down`), for `pr:NAME`.
    static func presets(_ presets: [String: QueryItems]) -> [String: [(String, [String])]] {
        let fits = ["inside": "fit", "cover": "fill-down", "fill": "force", "cover-clipped": "fill", "auto": "auto"]
        return presets.mapValues { query in
            query.items.map { item -> (String, [String]) in
                switch item.name {
                case "fit": ("rt", [fits[item.value] ?? item.value])
                case "enlarge": ("el", [item.value == "1" || item.value == "true" ? "1" : "0"])
                default: (item.name, [item.value])
                }
            }
        }
    }

    /// The options as imgproxy keeps them while reading a URL: later ones override earlier ones.
    private struct Options {
        var resizingType = "fit"
        var width = 0, height = 0
        var dpr = 1.0
        var enlarge = false
        var gravity = ImageProcessing.Gravity.centre
        var quality = 0
        var format: ImageProcessing.OutputFormat?
        var placeholder: ImageOptions.PlaceholderForm?
        var cacheBuster: String?
        var minWidth = 0, minHeight = 0
        var crop: ImageProcessing.RegionCrop?
        var extend = false
        var extendGravity = ImageProcessing.Gravity.centre
        var background: ImageProcessing.Color?

        /// The largest `dpr` (imgproxy bounds it only by its result limits; a bound keeps every size finite).
        static let maxDPR = 8.0

        static let resizingTypes: [String: ImageProcessing.Fit] = [
            "fit": .inside, "fill": .coverClipped, "fill-down": .cover, "force": .fill, "auto": .auto,
        ]
        /// imgproxy's names for formats TileCache does not encode yet: refused by name.
        static let otherFormats: Set<String> = ["gif", "ico", "bmp", "tiff", "heic", "jxl", "svg", "pdf", "mp4", "best"]
        /// Options imgproxy has that TileCache does not do (yet): refused by name, never ignored.
        static let unsupported: Set<String> = [
            "zoom", "z", "extend_aspect_ratio", "extend_ar", "exar",
            "trim", "t", "padding", "pd", "auto_rotate", "ar", "rotate", "rot", "flip", "fl",
            "blur", "bl", "sharpen", "sh", "pixelate", "pix", "watermark", "wm", "keep_copyright", "kcr", "strip_color_profile",
            "scp", "preserve_hdr", "ph", "enforce_thumbnail", "eth", "format_quality", "fq", "max_bytes", "mb", "skip_processing",
            "skp", "raw", "filename", "fn", "return_attachment", "att", "max_src_resolution", "msr", "max_src_file_size", "msfs",
            "max_animation_frames", "maf", "max_animation_frame_resolution", "mafr", "max_result_dimension", "mrd",
            "adjust", "a", "brightness", "br", "contrast", "co", "saturation", "sa", "monochrome", "mc", "duotone", "dt",
            "unsharp_masking", "ush", "colorize", "col", "gradient", "gr", "watermark_url", "wmu", "watermark_text", "wmt",
            "watermark_size", "wms", "watermark_shadow", "wmsh", "style", "st", "objects_position", "op", "crop_aspect_ratio",
            "crop_ar", "car", "page", "pg", "pages", "pgs", "disable_animation", "da", "video_thumbnail_second", "vts",
            "video_thumbnail_keyframes", "vtk", "video_thumbnail_tile", "vtt", "video_thumbnail_animation", "vta", "fallback_image_url",
            "fiu", "hashsum", "hs", "dpi", "autoquality", "aq", "jpeg_options", "jpgo", "png_options", "pngo", "webp_options", "webpo",
            "avif_options", "avifo", "resizing_algorithm", "ra", "background_alpha", "bga", "blur_detections", "bd",
            "draw_detections", "dd",
        ]

        mutating func apply(name: String, arguments args: [String], presets: [String: [(String, [String])]], now: Date,
                            depth: Int) throws(ServiceError) {
            func atMost(_ count: Int) throws(ServiceError) {
                guard args.count <= count else { throw invalid("Invalid \(name) arguments: \(args.joined(separator: ":").prefix(100))") }
            }
            func positiveInt(_ text: String, _ key: String) throws(ServiceError) -> Int {
                guard let value = Int(text), value >= 0 else {
                    throw invalid("Invalid \(key) argument: \(text.prefix(64)) (expected positive number or 0)")
                }
                return value
            }
            // Go's strconv.ParseBool; anything else is false, as imgproxy treats it (with a warning in its log).
            func bool(_ text: String) -> Bool { ["1", "t", "T", "TRUE", "true", "True"].contains(text) }
            switch name {
            case "resize", "rs":
                try atMost(8)
                if let type = args.first, !type.isEmpty { try apply(name: "rt", arguments: [type], presets: presets, now: now, depth: depth) }
                if args.count > 1 { try apply(name: "s", arguments: Array(args.dropFirst()), presets: presets, now: now, depth: depth) }
            case "size", "s":
                try atMost(7)
                if args.count >= 1, !args[0].isEmpty { width = try positiveInt(args[0], "width") }
                if args.count >= 2, !args[1].isEmpty { height = try positiveInt(args[1], "height") }
                if args.count >= 3, !args[2].isEmpty { enlarge = bool(args[2]) }
                if args.count >= 4, !args[3].isEmpty {
                    try apply(name: "ex", arguments: Array(args[3...]), presets: presets, now: now, depth: depth)
                }
            case "min-width", "mw":
                try atMost(1)
                minWidth = try positiveInt(args.first ?? "", "min-width")
            case "min-height", "mh":
                try atMost(1)
                minHeight = try positiveInt(args.first ?? "", "min-height")
            case "extend", "ex":
                try atMost(4)
                extend = bool(args.first ?? "")
                if args.count > 1 {
                    extendGravity = try Self.gravity(Array(args.dropFirst()))
                    guard extendGravity.anchor != .smart else { throw invalid("Invalid extend gravity: sm") }
                }
            case "crop", "c":
                try atMost(5)
                func size(_ text: String, _ key: String) throws(ServiceError) -> Double {
                    guard let value = Double(text), value.isFinite, value >= 0 else {
                        throw invalid("Invalid \(key) argument: \(text.prefix(64)) (expected positive number or 0)")
                    }
                    return value
                }
                var region = ImageProcessing.RegionCrop(width: try size(args.first ?? "", "crop width"), height: 0)
                if args.count > 1 { region.height = try size(args[1], "crop height") }
                if args.count > 2 { region.gravity = try Self.gravity(Array(args[2...])) }
                crop = region
            case "background", "bg":
                switch args.count {
                case 1 where args[0].isEmpty:
                    background = nil
                case 1:
                    // imgproxy's hex colours: 3 or 6 digits, no `#`.
                    guard args[0].count == 3 || args[0].count == 6, args[0].allSatisfy(\.isHexDigit),
                          let color = ImageProcessing.Color(name: args[0]) else {
                        throw invalid("Invalid background argument: \(args[0].prefix(64)) (expected hex-encoded color)")
                    }
                    background = color
                case 3:
                    var channels: [UInt8] = []
                    for (index, text) in args.enumerated() {
                        guard let value = UInt8(text) else {
                            throw invalid("Invalid background.\(["R", "G", "B"][index]) argument: \(text.prefix(64)) (expected number in range 0-255)")
                        }
                        channels.append(value)
                    }
                    background = ImageProcessing.Color(red: channels[0], green: channels[1], blue: channels[2])
                default:
                    throw invalid("Invalid background arguments: \(args.joined(separator: ":").prefix(100))")
                }
            case "resizing_type", "rt":
                try atMost(1)
                guard let type = args.first, Self.resizingTypes[type] != nil else {
                    throw invalid("Invalid resizing_type argument: \((args.first ?? "").prefix(64)) (expected fit, fill, fill-down, force or auto)")
                }
                resizingType = type
            case "width", "w":
                try atMost(1)
                width = try positiveInt(args.first ?? "", "width")
            case "height", "h":
                try atMost(1)
                height = try positiveInt(args.first ?? "", "height")
            case "dpr":
                try atMost(1)
                guard let value = Double(args.first ?? ""), value.isFinite, value > 0, value <= Self.maxDPR else {
                    throw invalid("Invalid dpr argument: \((args.first ?? "").prefix(64)) (expected a positive number up to \(Int(Self.maxDPR)))")
                }
                dpr = value
            case "enlarge", "el":
                try atMost(1)
                enlarge = bool(args.first ?? "")
            case "gravity", "g":
                gravity = try Self.gravity(args)
            case "quality", "q":
                try atMost(1)
                guard let value = Int(args.first ?? ""), (0...100).contains(value) else {
                    throw invalid("Invalid quality argument: \((args.first ?? "").prefix(64)) (expected number in range 0-100)")
                }
                quality = value
            case "format", "f", "ext":
                try atMost(1)
                let text = (args.first ?? "").lowercased()
                if let form = ImageOptions.PlaceholderForm(rawValue: text) {
                    (placeholder, format) = (form, nil)
                    break
                }
                placeholder = nil
                guard let named = ImageProcessing.OutputFormat(name: text) else {
                    if Self.otherFormats.contains(text) { throw invalid("the \(text) format is not supported by TileCache yet") }
                    throw invalid("Invalid format argument: \(text.prefix(64)) (expected supported image format)")
                }
                format = named
            case "strip_metadata", "sm":
                try atMost(1)  // TileCache's outputs never carry the source's metadata: on or off, the same bytes.
            case "cachebuster", "cb":
                try atMost(1)  // changes the URL (a CDN's key), never the image; an empty one is none, as imgproxy's.
                cacheBuster = args.first.flatMap { $0.isEmpty ? nil : $0 }
            case "expires", "exp":
                try atMost(1)
                guard let timestamp = Int64(args.first ?? "") else {
                    throw invalid("Invalid expires argument: \((args.first ?? "").prefix(64)) (expected unix timestamp)")
                }
                if timestamp > 0, Double(timestamp) < now.timeIntervalSince1970 { throw invalid("Expired URL") }
            case "preset", "pr":
                guard depth < 8 else { throw invalid("presets nest too deeply") }
                for presetName in args {
                    guard let options = presets[presetName] else { throw invalid("Unknown preset: \(presetName.prefix(64))") }
                    for (option, arguments) in options {
                        try apply(name: option, arguments: arguments, presets: presets, now: now, depth: depth + 1)
                    }
                }
            case _ where Self.unsupported.contains(name):
                throw invalid("the \(name) option is not supported by TileCache yet")
            default:
                throw invalid("Unknown processing option \(name.prefix(64))")
            }
        }

        static func gravity(_ args: [String]) throws(ServiceError) -> ImageProcessing.Gravity {
            guard let type = args.first else { throw invalid("Invalid gravity arguments") }
            guard let anchor = ImageProcessing.Gravity.Anchor(rawValue: type) else {
                throw invalid("Invalid gravity argument: \(type.prefix(64)) (expected ce, no, so, ea, we, noea, nowe, soea, sowe, sm or fp)")
            }
            guard args.count <= 3, anchor != .focusPoint || args.count == 3, anchor != .smart || args.count == 1 else {
                throw invalid("Invalid gravity arguments: \(args.joined(separator: ":").prefix(100))")
            }
            var gravity = ImageProcessing.Gravity(anchor)
            for (index, text) in args.dropFirst().enumerated() where !text.isEmpty {
                // Pixel offsets beyond the largest output side mean nothing but overflow; bounded like the sides.
                guard let value = Double(text), value.isFinite, abs(value) <= Double(ImageProcessing.maxSide),
                      anchor != .focusPoint || (0...1).contains(value) else {
                    throw invalid("Invalid gravity \(index == 0 ? "x" : "y") offset: \(text.prefix(64))")
                }
                if index == 0 { gravity.x = value } else { gravity.y = value }
            }
            return gravity
        }

        /// The pipeline's processing, `dpr` kept beside the sizes as imgproxy keeps it, bounded by TileCache's output
        /// limits.
        func processing(accept: String?, negotiation: FormatNegotiation) throws(ServiceError) -> (ImageProcessing, Bool) {
            for (name, side) in [("width", width), ("height", height)] where Double(side) * dpr > Double(ImageProcessing.maxSide) {
                throw ServiceError(.badRequest, reason: .outputTooLarge,
                                   message: "\(name) x dpr is \(Double(side) * dpr), above the limit of \(ImageProcessing.maxSide) pixels")
            }
            if Double(width) * dpr * Double(height) * dpr > Double(ImageProcessing.maxPixels) {
                throw ServiceError(.badRequest, reason: .outputTooLarge,
                                   message: "\(width)x\(height) at dpr \(dpr) is above the limit of \(ImageProcessing.maxPixels) pixels")
            }
            let fit = Self.resizingTypes[resizingType] ?? .inside
            var processing = ImageProcessing(width: width > 0 ? width : nil, height: height > 0 ? height : nil, fit: fit, enlarge: enlarge,
                                             quality: quality == 0 ? nil : quality, format: format, gravity: gravity, dpr: dpr)
            if format == nil { processing.format = negotiation.format(accept: accept) }
            (processing.minWidth, processing.minHeight) = (minWidth > 0 ? minWidth : nil, minHeight > 0 ? minHeight : nil)
            if let crop, crop.width > 0 || crop.height > 0 { processing.regionCrop = crop }
            processing.extend = extend ? extendGravity : nil
            processing.background = background
            if placeholder != nil { return (.placeholder(of: processing), false) }
            return (processing, negotiation.negotiates && format == nil)
        }
    }
}

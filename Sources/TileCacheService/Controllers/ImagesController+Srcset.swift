import Catalogue
import Foundation
import Hummingbird
import ImageCore
import NIOCore

/// `…/srcset`: what a page needs to write `<img src srcset sizes>` for an element's image without knowing the URL
/// scheme: the variants' URLs (signed when the service signs), their widths and heights, the `srcset` text, and the
/// image's placeholder.
///
/// Widths: `widths=64,128` (each must be one the service makes: with `--allowed-widths`, one of them; with signing and no
/// list, one of `defaultWidths`, so the answer never signs a variant a URL could not name), else `--allowed-widths`,
/// else `defaultWidths`; none above the image's own width (a variant is never enlarged), and when all are, the smallest
/// (made at the image's own size). Sizes are the processor's (`ProcessingGeometry`). `preset=NAME` gives the preset's
/// URL alone, and is the only way with `--only-presets`. `format=` names the variants' format; without it the browser's
/// `Accept` chooses, as for any URL without one.
extension ImagesController {
    /// The widths offered when neither the request nor `--allowed-widths` names any.
    static let defaultWidths = [64, 128, 256, 512, 1024, 2048]

    /// The body of `…/srcset`.
    struct SrcsetAnswer: Encodable {
        struct Candidate: Encodable {
            var url: String
            var width: Int
            var height: Int
        }

        /// The largest candidate's URL, for `src`.
        var src: String
        /// `URL WIDTHw, ...`, for `srcset`.
        var srcset: String
        /// The image's upright size (for `width` and `height`, so the page reserves the box).
        var width: Int
        var height: Int
        var candidates: [Candidate]
        var placeholder: ImagePlaceholder
    }

    /// GET routes of `…/thumbnail/srcset` and `…/image/srcset`.
    func srcsetRoutes(_ routes: RouteCollection<BasicRequestContext>) {
        for (path, kind) in [("thumbnail", ImageKind.thumbnail), ("image", .full)] {
            routes.get("/api/v1/elements/:id/\(path)/srcset") { request, context in
                try await srcset(request, element: try elements.element(context.parameters.get("id") ?? ""), kind: kind, path: path)
            }
        }
    }

    private func srcset(_ request: Request, element: Element, kind: ImageKind, path: String) async throws -> Response {
        let query = QueryItems(request.uri.query)
        if let unknown = query.items.first(where: { !["widths", "format", "preset"].contains($0.name) && !ImageOptions.isIgnored($0.name) }) {
            throw ServiceError(.badRequest, reason: .unknownParameter, message: "srcset takes widths, format or preset, not '\(unknown.name.prefix(64))'")
        }
        if kind == .full, element.hasKnownMissingPhoto {
            throw ServiceError(.notFound, reason: .noPhoto, message: "there is no full-size photo of \(element.name)")
        }
        let format = try query["format"].map { (name: String) throws(ServiceError) -> String in
            guard let format = ImageProcessing.OutputFormat(name: name) else {
                throw ServiceError(.badRequest, reason: .badFormat, message: "format must be one of \(ImageProcessing.OutputFormat.names), got '\(name.prefix(64))'")
            }
            return format.rawValue
        }
        let original = ImageRequest(url: builder.url(for: element, kind: kind), alternatives: kind == .full ? builder.otherPhotoURLs(for: element) : [])
        let served = try await load(original, photoOf: kind == .full ? element : nil)
        let placeholder = try Self.placeholder(in: try await load(original.placeholder, photoOf: nil))
        let (width, height) = (served.header.uprightWidth, served.header.uprightHeight)
        let routePath = "/api/v1/elements/\(element.number)/\(path)"
        var candidates: [SrcsetAnswer.Candidate] = []
        /// The size the variant `processing` makes of this image, as the processor computes it.
        func size(_ processing: ImageProcessing) -> (width: Int, height: Int) {
            let geometry = ProcessingGeometry(processing, sourceWidth: width, sourceHeight: height)
            return (geometry.width, geometry.height)
        }
        if let preset = query["preset"] {
            let options = try variantRules.expanded(QueryItems(items: [("preset", preset)]))
            let made = size(try ImageOptions(options, accept: nil).processing)
            candidates = [.init(url: url(routePath, [("preset", preset)]), width: made.width, height: made.height)]
        } else if variantRules.onlyPresets {
            throw ServiceError(.badRequest, reason: .optionNotAllowed, message: "this service makes only its presets: ask for …/srcset?preset=NAME")
        } else {
            let offered = variantRules.allowedWidths.map { Array($0).sorted() } ?? Self.defaultWidths
            var asked = offered
            if let text = query["widths"] {
                let parsed = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
                guard !parsed.isEmpty, parsed.allSatisfy({ $0.map { (1...ImageProcessing.maxSide).contains($0) } ?? false }) else {
                    throw ServiceError(.badRequest, reason: .badWidth, message: "widths must be whole numbers from 1 to \(ImageProcessing.maxSide), comma-separated, got '\(text.prefix(64))'")
                }
                asked = Array(Set(parsed.compactMap { $0 })).sorted()
                let bounded = variantRules.allowedWidths != nil || signer != nil
                if bounded, let other = asked.first(where: { !offered.contains($0) }) {
                    throw ServiceError(.badRequest, reason: .widthNotAllowed, message: """
                        width \(other) is not one this service makes (widths: \(offered.map(String.init).joined(separator: ", ")))
                        """)
                }
            }
            var chosen = asked.filter { $0 <= width }
            // Every width is above the image's: the smallest, which the service makes at the image's own size.
            if chosen.isEmpty, let smallest = asked.first { chosen = [smallest] }
            for w in chosen {
                var options: [(String, String)] = [("w", String(w))]
                if let format { options.append(("format", format)) }
                let made = size(ImageProcessing(width: w))
                candidates.append(.init(url: url(routePath, options), width: made.width, height: made.height))
            }
        }
        let answer = SrcsetAnswer(src: candidates.last?.url ?? routePath, srcset: candidates.map { "\($0.url) \($0.width)w" }.joined(separator: ", "),
                                  width: width, height: height, candidates: candidates, placeholder: placeholder)
        var response = try JSONResponse.make(answer)
        response.headers[.cacheControl] = "public, max-age=\(maxAgeSeconds)"
        return response
    }

    /// `path` with `options` as its query, signed when the service signs.
    private func url(_ path: String, _ options: [(String, String)]) -> String {
        var items = options.map { (name: $0.0, value: $0.1) }
        if let signer { items.append((URLSigner.parameter, signer.signature(path: path, options: items))) }
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        return path + "?" + items.map { "\($0.name)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? $0.value)" }.joined(separator: "&")
    }
}

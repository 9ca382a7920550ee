import Catalogue
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import ImageCore
import Logging
import NIOCore

/// The element API in the seed's shape (`/api/v1/elements`, `/api/v1/elements_remaining`, one element by id), each
/// element's thumbnail and photo, and the two seed image hosts' paths, so an app that swaps only the host works.
struct ElementsController: Sendable {
    let catalogue: ElementCatalogue
    /// Where the catalogue's images live upstream.
    let builder: ImageURLBuilder
    /// Every image request goes through it.
    let pipeline: ImagePipeline
    /// What the photo host said about each photo (`has_image`).
    let photos: PhotoAvailability
    /// Counts requests for photos known to be missing.
    let metrics: ServiceMetrics
    /// Records image requests, when recording.
    let trace: TraceRecorder?
    /// `Cache-Control: max-age` of images.
    let maxAgeSeconds: Int
    /// Checks the signature of URLs with processing options, when the service requires one.
    let signer: URLSigner?
    /// The presets and allow-lists that bound the variants URLs may ask for.
    let variantRules: VariantRules
    /// The base of the JSON's absolute URLs (`--public-url`); nil: paths.
    let publicURL: String?
    /// Whether `--trusted-proxies` is set: only then do `X-Forwarded-Host` and `-Proto` reach the router (from those
    /// proxies alone) and make the JSON's absolute URLs.
    let trustsProxies: Bool
    let logger: Logger

    /// The seed API's first list holds elements 1 to 100; `elements_remaining` holds the rest.
    static let firstListRange = 1...100

    /// GET routes (HEAD comes from the router).
    var routes: RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        routes.get("/api/v1/elements") { request, _ in try list(request, numbers: Self.firstListRange) }
        routes.get("/api/v1/elements_remaining") { request, _ in try list(request, numbers: (Self.firstListRange.upperBound + 1)...Int.max) }
        routes.get("/api/v1/elements/:id") { request, context in try one(request, context) }
        for (path, kind) in [("thumbnail", ImageKind.thumbnail), ("image", .full)] {
            routes.get("/api/v1/elements/:id/\(path)") { request, context in
                try await image(request, element: try element(context.parameters.get("id") ?? ""), kind: kind)
            }
            routes.get("/api/v1/elements/:id/\(path)/info") { request, context in
                try await info(request, element: try element(context.parameters.get("id") ?? ""), kind: kind)
            }
        }
        // The seed's image hosts, host swapped: `/periodictable/Tiles/NNN/s7.JPG` and `/<lowercased name>.jpg`.
        routes.get("/periodictable/Tiles/:number/s7.JPG") { request, context in
            try await image(request, element: try tile(context.parameters.get("number") ?? ""), kind: .thumbnail)
        }
        for path in ["/{name}.jpg", "/images-of-elements/{name}.jpg"] {
            routes.get(RouterPath(stringLiteral: path)) { request, context in
                try await image(request, element: try photo(context.parameters.get("name") ?? ""), kind: .full)
            }
        }
        return routes
    }

    private func list(_ request: Request, numbers: ClosedRange<Int>) throws -> Response {
        let base = baseURL(request)
        let records = catalogue.elements.filter { numbers.contains($0.number) }
            .map { ElementRecord.make($0, baseURL: base, hasImage: hasImage($0)) }
        let query = try ListQuery(QueryItems(request.uri.query), fields: ElementRecord.fields)
        let (page, total) = query.apply(to: records)
        var response = try JSONResponse.make(page)
        response.headers[ListQuery.totalCountHeader] = String(total)
        return response
    }

    private func one(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        let element = try element(context.parameters.get("id") ?? "")
        return try JSONResponse.make(ElementRecord.make(element, baseURL: baseURL(request), hasImage: hasImage(element)))
    }

    /// The base of the JSON's absolute URLs: `--public-url`; else, behind a trusted proxy, its `X-Forwarded-Proto`
    /// and `X-Forwarded-Host` (`ForwardedHeaders` removed them from everyone else's requests; with several values,
    /// the last, the nearest proxy's); else none: the URLs are paths. Never the `Host` header.
    func baseURL(_ request: Request) -> String {
        if let publicURL { return publicURL }
        guard trustsProxies else { return "" }
        func last(_ name: HTTPField.Name) -> String? {
            request.headers[values: name].last?.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces) }
        }
        guard let host = last(.forwardedHost), !host.isEmpty, host.utf8.count <= 255,
              host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:[]".contains($0)) }) else { return "" }
        let scheme = last(.forwardedProto)?.lowercased()
        return "\(scheme == "https" ? "https" : "http")://\(host)"
    }

    /// Whether a photo of `element` is served: none for 90 and up, nor where the photo host answered 404.
    private func hasImage(_ element: Element) -> Bool {
        !element.hasKnownMissingPhoto && !photos.lacksPhoto(element)
    }

    private func image(_ request: Request, element: Element, kind: ImageKind) async throws -> Response {
        let (imageRequest, options) = try imageRequest(request.uri, headers: request.headers, element: element, kind: kind)
        trace?.record(imageRequest.url)
        if kind == .full, element.hasKnownMissingPhoto {
            metrics.knownMissing()
            throw ServiceError(.notFound, reason: .noPhoto, message: "there is no full-size photo of \(element.name)")
        }
        // A conditional request for a variant is answered from its source's validators: a 304 never touches pixels.
        if !options.processing.isNone, request.headers[.ifNoneMatch] != nil {
            let source = try await load(imageRequest.original, photoOf: kind == .full ? element : nil)
            if let answer = Self.notModified(request.headers, variantOf: source, options: options, maxAgeSeconds: maxAgeSeconds) {
                return answer.response
            }
        }
        let served = try await load(imageRequest, photoOf: kind == .full ? element : nil)
        return Self.answer(served, to: request.headers, options: options, maxAgeSeconds: maxAgeSeconds).response
    }

    /// The query names an image URL may carry beside the options: the signature and a preset's name.
    static let allowedBesideOptions = VariantRules.presetNames.union([URLSigner.parameter])

    /// The pipeline's request for an image route's request, once its options, signature and width are checked.
    private func imageRequest(_ uri: URI, headers: HTTPFields, element: Element, kind: ImageKind) throws -> (ImageRequest, ImageOptions) {
        let query = QueryItems(uri.query)
        let own = try ImageOptions(query, accept: headers[.accept], allowed: Self.allowedBesideOptions)
        // The signature before the service's other limits: an unsigned request learns nothing about them.
        if let signer, query.items.contains(where: { ImageOptions.names.contains($0.name) || VariantRules.presetNames.contains($0.name) }) {
            try signer.verify(path: uri.path, query: query)
        }
        let expanded = try variantRules.expanded(query)
        let options = query.items.contains(where: { VariantRules.presetNames.contains($0.name) })
            ? try ImageOptions(expanded, accept: headers[.accept], allowed: [URLSigner.parameter]) : own
        try variantRules.check(query, width: options.processing.width)
        let url = builder.url(for: element, kind: kind)
        let request = ImageRequest(url: url, alternatives: kind == .full ? builder.otherPhotoURLs(for: element) : [],
                                   processing: options.processing)
        return (request, options)
    }

    /// An image route's answer: its status, headers and bytes (none for a 304).
    struct ImageAnswer {
        var status: HTTPResponse.Status
        var headers: HTTPFields
        var body: ByteBuffer?

        /// As Hummingbird sends it (it adds `Content-Length` for the bytes).
        var response: Response {
            body.map { Response(status: status, headers: headers, body: .init(byteBuffer: $0)) } ?? Response(status: status, headers: headers)
        }
    }

    /// The headers every image answer has: how long to keep it, and `Vary: Accept` when the format was negotiated.
    private static func cacheHeaders(_ options: ImageOptions, maxAgeSeconds: Int) -> HTTPFields {
        var headers: HTTPFields = [.cacheControl: "public, max-age=\(maxAgeSeconds)"]
        if options.negotiated { headers[.vary] = "Accept" }
        return headers
    }

    /// A 304 for a conditional request for a variant whose source's validators, processed as the variant is, match;
    /// nil when they do not.
    private static func notModified(_ requestHeaders: HTTPFields, variantOf source: ImageResponse, options: ImageOptions,
                                    maxAgeSeconds: Int) -> ImageAnswer? {
        let validators = source.validators.processed(options.processing)
        guard isNotModified(requestHeaders, etag: validators.etag, lastModified: validators.lastModified) else { return nil }
        var headers = cacheHeaders(options, maxAgeSeconds: maxAgeSeconds)
        headers[.eTag] = validators.etag
        headers[.lastModified] = validators.lastModified
        return ImageAnswer(status: .notModified, headers: headers)
    }

    /// The answer with `served`'s bytes, or a 304 when the request's validators match them.
    private static func answer(_ served: ImageResponse, to requestHeaders: HTTPFields, options: ImageOptions, maxAgeSeconds: Int) -> ImageAnswer {
        var headers = cacheHeaders(options, maxAgeSeconds: maxAgeSeconds)
        headers[.eTag] = served.validators.etag
        headers[.lastModified] = served.validators.lastModified
        headers[sourceHeader] = ServedFrom(served).rawValue
        if isNotModified(requestHeaders, etag: served.validators.etag, lastModified: served.validators.lastModified) {
            return ImageAnswer(status: .notModified, headers: headers)
        }
        headers[.contentType] = served.contentType
        return ImageAnswer(status: .ok, headers: headers, body: served.bytes ?? ByteBuffer())
    }

    // MARK: - The fast path's half (CachedImageFastPath)

    /// The image route a path names, as the router would match it: the route's template (as metrics label it), the
    /// element and the kind of image. Nil for any other path, and for paths the router treats specially (percent
    /// escapes, empty segments), which the router then answers.
    func imageRoute(_ path: String) -> (route: String, element: Element, kind: ImageKind)? {
        guard path.utf8.first == UInt8(ascii: "/"), !path.utf8.contains(UInt8(ascii: "%")) else { return nil }
        let parts = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst().map { Substring($0) }
        guard !parts.contains(where: \.isEmpty) else { return nil }
        func photoName(_ file: Substring) -> String? { file.hasSuffix(".jpg") && file.count > 4 ? String(file.dropLast(4)) : nil }
        switch parts.count {
        case 1:
            guard let name = photoName(parts[0]), let element = try? photo(name) else { return nil }
            return ("/{name}.jpg", element, .full)
        case 2 where parts[0] == "images-of-elements":
            guard let name = photoName(parts[1]), let element = try? photo(name) else { return nil }
            return ("/images-of-elements/{name}.jpg", element, .full)
        case 4 where parts[0] == "periodictable" && parts[1] == "Tiles" && parts[3] == "s7.JPG":
            guard let element = try? tile(String(parts[2])) else { return nil }
            return ("/periodictable/Tiles/{number}/s7.JPG", element, .thumbnail)
        case 5 where parts[0] == "api" && parts[1] == "v1" && parts[2] == "elements" && (parts[4] == "thumbnail" || parts[4] == "image"):
            guard let element = try? element(String(parts[3])) else { return nil }
            return ("/api/v1/elements/{id}/\(parts[4])", element, parts[4] == "thumbnail" ? .thumbnail : .full)
        default:
            return nil
        }
    }

    /// The answer to a request for `element`'s image while everything it needs is in the memory tier, made without
    /// waiting; nil when it needs more (a load, an error answer), and then the route answers it. Records what the route
    /// records for the same answer (the trace, the photo's availability; the pipeline its statistics).
    func cachedAnswer(_ uri: URI, headers: HTTPFields, element: Element, kind: ImageKind) -> ImageAnswer? {
        guard !(kind == .full && element.hasKnownMissingPhoto),
              let (imageRequest, options) = try? imageRequest(uri, headers: headers, element: element, kind: kind) else { return nil }
        var answer: ImageAnswer
        if !options.processing.isNone, headers[.ifNoneMatch] != nil {
            // The route asks for the source, then (unless its validators match) the variant: both are recorded, and
            // only once the fast path is sure to answer, so a request it hands to the route is not counted twice.
            guard let source = pipeline.cachedImage(for: imageRequest.original, recording: false) else { return nil }
            if let notModified = Self.notModified(headers, variantOf: source, options: options, maxAgeSeconds: maxAgeSeconds) {
                answer = notModified
            } else {
                guard let served = pipeline.cachedImage(for: imageRequest) else { return nil }
                answer = Self.answer(served, to: headers, options: options, maxAgeSeconds: maxAgeSeconds)
            }
            pipeline.statistics.record(source)
        } else {
            guard let served = pipeline.cachedImage(for: imageRequest) else { return nil }
            answer = Self.answer(served, to: headers, options: options, maxAgeSeconds: maxAgeSeconds)
        }
        trace?.record(imageRequest.url)
        if kind == .full { photos.note(element, after: nil) }
        return answer
    }

    /// What the original image is, as imgproxy's `/info` says it: format, stored size, EXIF orientation and the upright
    /// size a viewer shows, bytes. No options: a variant's size follows from them (docs/service.md).
    private func info(_ request: Request, element: Element, kind: ImageKind) async throws -> Response {
        guard QueryItems(request.uri.query).items.allSatisfy({ ImageOptions.isIgnored($0.name) }) else {
            throw ServiceError(.badRequest, reason: .unknownParameter,
                               message: "info takes no options (cache-busters aside): it describes the original image")
        }
        if kind == .full, element.hasKnownMissingPhoto {
            throw ServiceError(.notFound, reason: .noPhoto, message: "there is no full-size photo of \(element.name)")
        }
        let url = builder.url(for: element, kind: kind)
        let served = try await load(ImageRequest(url: url, alternatives: kind == .full ? builder.otherPhotoURLs(for: element) : []),
                                    photoOf: kind == .full ? element : nil)
        let header = served.header
        var response = try JSONResponse.make(ImageInfo(format: header.format.rawValue, contentType: served.contentType, width: header.width,
                                                       height: header.height, orientation: header.orientation ?? 1,
                                                       uprightWidth: header.uprightWidth, uprightHeight: header.uprightHeight,
                                                       bytes: header.byteCount, etag: served.validators.etag))
        response.headers[.cacheControl] = "public, max-age=\(maxAgeSeconds)"
        return response
    }

    /// The body of `…/info`.
    struct ImageInfo: Encodable {
        var format: String
        var contentType: String
        /// As stored.
        var width: Int
        var height: Int
        /// The EXIF orientation, 1 (upright as stored) when none is declared.
        var orientation: Int
        /// What a viewer shows, and what thumbnails are made from.
        var uprightWidth: Int
        var uprightHeight: Int
        var bytes: Int
        var etag: String
    }

    /// The pipeline's answer to `request`, as an HTTP error when it fails; a photo's load also tells `photos` whether
    /// the host has it.
    private func load(_ request: ImageRequest, photoOf element: Element?) async throws(ServiceError) -> ImageResponse {
        do {
            let response = try await pipeline.image(for: request)
            if let element { photos.note(element, after: nil) }
            return response
        } catch {
            if let element { photos.note(element, after: error) }
            if !error.isNotFound, error.reason != .overloaded {
                logger.warning("image failed", metadata: ["url": "\(request.url)", "reason": "\(error.reason.rawValue)",
                                                                      "message": "\(error.message)"])
            }
            throw ServiceError.image(error)
        }
    }

    /// Where the bytes of an image response came from (`ServedFrom`).
    static let sourceHeader = HTTPField.Name("X-TileCache-Source")!

    /// The values of `X-TileCache-Source`.
    enum ServedFrom: String {
        /// The pipeline's memory tier (the image, or the variant).
        case memory
        /// The original, read from the disk cache.
        case diskHit
        /// The original, on disk and confirmed by upstream with a 304.
        case revalidated
        /// The original or the variant, from the shared store of a fleet.
        case sharedHit
        /// The original, downloaded for this request.
        case networkFetch
        /// A variant made for this request.
        case resized

        init(_ response: ImageResponse) {
            // A variant made for this request is `resized` whichever layer had its source (its source's outcome is a
            // memory hit when the original was in memory).
            switch response.outcome {
            case _ where response.processed: self = .resized
            case .memoryHit: self = .memory
            case .diskHit: self = .diskHit
            case .revalidated: self = .revalidated
            case .sharedHit: self = .sharedHit
            case .networkFetch: self = .networkFetch
            }
        }
    }

    /// If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2).
    static func isNotModified(_ headers: HTTPFields, etag: String, lastModified: String) -> Bool {
        let tags = headers[values: .ifNoneMatch].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        if !tags.isEmpty {
            return tags.contains { $0 == "*" || $0 == etag || $0 == "W/" + etag }
        }
        guard let since = headers[.ifModifiedSince].flatMap(HTTPDate.date(from:)),
              let modified = HTTPDate.date(from: lastModified) else { return false }
        return modified <= since
    }

    /// The element an id names: atomic number, symbol, name or another spelling of the name, any case.
    private func element(_ id: String) throws(ServiceError) -> Element {
        guard id.count <= 64, let element = catalogue.element(matching: id) else {
            throw ServiceError(.notFound, reason: .unknownElement,
                               message: "no element '\(id.prefix(64))': use an atomic number (1-118), a symbol or a name")
        }
        return element
    }

    /// The element of a tile path segment: three digits, `001` to `118`, as the thumbnail host names them.
    private func tile(_ segment: String) throws(ServiceError) -> Element {
        guard let element = ImageURLBuilder.element(tile: segment, in: catalogue) else {
            throw ServiceError(.notFound, reason: .unknownElement,
                               message: "no tile '\(segment.prefix(64))': tiles are numbered with three digits, 001 to 118")
        }
        return element
    }

    /// The element of a photo's file name (before `.jpg`): the lowercased name, or another spelling of it (`caesium`).
    private func photo(_ name: String) throws(ServiceError) -> Element {
        guard let element = ImageURLBuilder.element(photo: name, in: catalogue) else {
            let hint = catalogue.element(matching: name).map { ": the photo of \($0.name) is /\($0.name.lowercased()).jpg" } ?? ""
            throw ServiceError(.notFound, reason: .unknownElement, message: "no photo '\(name.prefix(64)).jpg'\(hint)")
        }
        return element
    }
}

/// One element as the seed API served it: every key of its element JSON (absent values as `null`, `id` a string),
/// plus TileCache's own (`group`, `block`, `electron_configuration`, `thumbnail_url`, `image_url`, `has_image`).
enum ElementRecord {
    /// The seed element API's keys.
    static let seedKeys: [String] = [
        "name", "appearance", "atomic_mass", "boil", "category", "color", "density", "discovered_by", "melt", "molar_heat",
        "named_by", "number", "period", "phase", "source", "spectral_img", "summary", "symbol", "xpos", "ypos", "shells", "id",
    ]
    /// Every key of a record.
    static let fields = Set(seedKeys + ["group", "block", "electron_configuration", "thumbnail_url", "image_url", "has_image"])

    static func make(_ element: Element, baseURL: String, hasImage: Bool) -> [String: JSONValue] {
        [
            "name": .string(element.name), "appearance": .nullable(element.appearance), "atomic_mass": .number(element.atomicMass),
            "boil": .nullable(element.boil), "category": .string(element.category), "color": .nullable(element.color),
            "density": .nullable(element.density), "discovered_by": .nullable(element.discoveredBy), "melt": .nullable(element.melt),
            "molar_heat": .nullable(element.molarHeat), "named_by": .nullable(element.namedBy), "number": .integer(Int64(element.number)),
            "period": .integer(Int64(element.period)), "phase": .string(element.phase), "source": .string(element.source),
            "spectral_img": .nullable(element.spectralImage), "summary": .string(element.summary), "symbol": .string(element.symbol),
            "xpos": .integer(Int64(element.xpos)), "ypos": .integer(Int64(element.ypos)),
            "shells": .array(element.shells.map { .integer(Int64($0)) }), "id": .string(String(element.number)),
            "group": .integer(Int64(element.group)), "block": .nullable(element.block),
            "electron_configuration": .nullable(element.electronConfiguration),
            "thumbnail_url": .string("\(baseURL)/api/v1/elements/\(element.number)/thumbnail"),
            "image_url": .string("\(baseURL)/api/v1/elements/\(element.number)/image"),
            "has_image": .bool(hasImage),
        ]
    }
}

/// JSON responses with sorted keys.
enum JSONResponse {
    static func make(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(value)
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

import Catalogue
import Foundation
import HTTPTypes
@_spi(Internal) import Hummingbird
import HummingbirdCore
import ImageCore
import Logging
import NIOCore

/// Each element's thumbnail and photo, under the API's paths and the seed's two image hosts' (`ImageRoute.all`, so an
/// app that swaps only the host works), with options (size, fit, format, quality) and `…/info`; and their fast case,
/// answered from the memory tier without the router (`CachedImageFastPath`) by the same code.
struct ImagesController: Sendable {
    let elements: ElementResolver
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
    /// The fast path's readings of requests it could not answer, for their routes.
    let parsed = ParsedImageRequests()
    /// `ImageRoute.all` in Hummingbird's route trie, for the fast path.
    let fastRoutes: RouterTrie<ImageRoute>
    /// The paths `fastRoutes` resolved, remembered.
    let resolvedPaths = ResolvedImagePaths()
    /// The fast path's answers, remembered with the readings they were made for.
    let preparedAnswers = PreparedImageAnswers()
    /// The formats a URL without `format` may be answered in: WebP, and AVIF with `--auto-avif`.
    let negotiation: FormatNegotiation
    /// Whether client hints fill in what URLs leave open (`--client-hints`, `ClientHints`).
    let clientHints: Bool
    let logger: Logger

    init(elements: ElementResolver, builder: ImageURLBuilder, pipeline: ImagePipeline, photos: PhotoAvailability, metrics: ServiceMetrics,
         trace: TraceRecorder?, maxAgeSeconds: Int, signer: URLSigner?, variantRules: VariantRules,
         negotiation: FormatNegotiation = FormatNegotiation(avif: false, webp: true), clientHints: Bool = false, logger: Logger) {
        (self.elements, self.builder, self.pipeline, self.photos, self.metrics) = (elements, builder, pipeline, photos, metrics)
        (self.negotiation, self.clientHints) = (negotiation, clientHints)
        (self.trace, self.maxAgeSeconds, self.signer, self.variantRules, self.logger) = (trace, maxAgeSeconds, signer, variantRules, logger)
        let trie = RouterPathTrieBuilder<ImageRoute>()
        for route in ImageRoute.all { trie.addEntry(route.path, value: route) }
        fastRoutes = RouterTrie(base: trie, options: ImageRoute.routerOptions)
    }

    /// GET routes (HEAD comes from the router).
    var routes: RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        for route in ImageRoute.all {
            routes.get(route.path) { request, context in
                try await image(request, element: try route.element(elements, context.parameters), kind: route.kind)
            }
        }
        for (path, kind) in [("thumbnail", ImageKind.thumbnail), ("image", .full)] {
            routes.get("/api/v1/elements/:id/\(path)/info") { request, context in
                try await info(request, element: try elements.element(context.parameters.get("id") ?? ""), kind: kind)
            }
        }
        srcsetRoutes(routes)
        return routes
    }

    private func image(_ request: Request, element: Element, kind: ImageKind) async throws -> Response {
        let (imageRequest, options) = try parsed.take(target: request.uri.description, accept: readingKey(request.headers))
            ?? self.imageRequest(request.uri, headers: request.headers, element: element, kind: kind)
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

    /// Everything besides the target that a request's reading depends on: `Accept`, and the hints when they are read.
    func readingKey(_ headers: HTTPFields) -> String? {
        guard clientHints else { return headers[.accept] }
        return (headers[.accept] ?? "") + "\n" + ClientHints(headers).key
    }

    /// The pipeline's request for an image route's request, once its options, signature and width are checked.
    func imageRequest(_ uri: URI, headers: HTTPFields, element: Element, kind: ImageKind) throws -> (ImageRequest, ImageOptions) {
        let given = QueryItems(uri.query)
        // Hints fill in what the URL leaves open; where URLs must be signed, only for a URL whose signature holds (even
        // one without options: its signature is then of the path alone).
        let hinted = clientHints && (signer == nil || given[URLSigner.parameter] != nil)
        if hinted, let signer { try signer.verify(path: uri.path, query: given) }
        let query = hinted ? ClientHints(headers).applied(to: given, rules: variantRules) : given
        let own = try ImageOptions(query, accept: headers[.accept], allowed: Self.allowedBesideOptions, negotiation: negotiation)
        // The signature before the service's other limits: an unsigned request learns nothing about them.
        if let signer, !hinted, given.items.contains(where: { ImageOptions.names.contains($0.name) || VariantRules.presetNames.contains($0.name) }) {
            try signer.verify(path: uri.path, query: given)
        }
        let expanded = try variantRules.expanded(query)
        var options = query.items.contains(where: { VariantRules.presetNames.contains($0.name) })
            ? try ImageOptions(expanded, accept: headers[.accept], allowed: [URLSigner.parameter], negotiation: negotiation) : own
        options.variesByHints = clientHints
        try variantRules.check(query, width: options.processing.width)
        let url = builder.url(for: element, kind: kind)
        let request = ImageRequest(url: url, alternatives: kind == .full ? builder.otherPhotoURLs(for: element) : [],
                                   processing: options.processing)
        return (request, options)
    }

    // MARK: - The fast case

    /// The image route `path` matches, as the router matches it (Hummingbird's trie over `ImageRoute.all`), and the
    /// element it names; nil for any other path, and for one whose element is unknown (the route
    /// answers the 404).
    func imageRoute(_ path: String) -> ResolvedImagePaths.Resolved? {
        resolvedPaths.resolved(path) {
            guard let (route, parameters) = fastRoutes.resolve(path), let element = try? route.element(elements, parameters) else { return nil }
            return .init(route: route, element: element)
        }
    }

    /// The answer remembered for an unconditional request with `target`, `headers` and their `readingKey`
    /// (`PreparedImageAnswers`); nil when none, or when the request is conditional.
    func preparedAnswer(target: String, headers: HTTPFields, readingKey: String?) -> PreparedImageAnswers.Prepared? {
        guard Self.isUnconditional(headers) else { return nil }
        return preparedAnswers.prepared(target: target, readingKey: readingKey)
    }

    /// Whether a request with `headers` asks for the image whatever the client holds (no `If-None-Match`, no
    /// `If-Modified-Since`): only such answers are remembered.
    static func isUnconditional(_ headers: HTTPFields) -> Bool {
        headers[.ifNoneMatch] == nil && headers[.ifModifiedSince] == nil
    }

    /// The answer to a request `prepared` was remembered for, while its image is in the memory tier: the remembered
    /// head while the image is the one it was made from, else a head made anew (and remembered). Nil when the image is
    /// not in memory, and the route answers with the remembered reading. Records what `cachedAnswer` records.
    func cachedAnswer(_ prepared: PreparedImageAnswers.Prepared, target: String, readingKey: String?) -> FastAnswer? {
        guard let served = pipeline.cachedImage(for: prepared.request) else {
            parsed.put((prepared.request, prepared.options), target: target, accept: readingKey)
            return nil
        }
        let used = PreparedImageAnswers.Inputs(served) == prepared.inputs ? prepared
            : prepare(served, request: prepared.request, options: prepared.options, route: prepared.route,
                      target: target, readingKey: readingKey)
        recordAnswer(prepared.request, element: prepared.route.element, kind: prepared.route.route.kind)
        return FastAnswer(head: used.head, body: served.bytes ?? ByteBuffer(), prepared: used)
    }

    /// The answer to a request for the image of `route` (its route and element) while everything it needs is in the
    /// memory tier, made without waiting; nil when it needs more (a load, an error answer), and then the route answers
    /// it. Records what the route records for the same answer (the trace, the photo's availability; the pipeline its
    /// statistics). The answer to an unconditional request for an image is remembered for the next request with the
    /// same target and reading key (`readingKey(headers)`, given: `preparedAnswer`).
    func cachedAnswer(_ uri: URI, headers: HTTPFields, readingKey key: String?, route: ResolvedImagePaths.Resolved) -> FastAnswer? {
        let (element, kind) = (route.element, route.route.kind)
        guard !(kind == .full && element.hasKnownMissingPhoto) else { return nil }
        let target = uri.description
        let unconditional = Self.isUnconditional(headers)
        guard let (imageRequest, options) = try? imageRequest(uri, headers: headers, element: element, kind: kind) else { return nil }
        /// The route answers: it gets this reading instead of making its own.
        func handOver() -> FastAnswer? {
            parsed.put((imageRequest, options), target: target, accept: key)
            return nil
        }
        // A placeholder is text (JSON, or a hash), which the router's text middleware compresses and tags for the
        // client's Accept-Encoding; the fast path answers images only.
        if options.placeholder != nil { return handOver() }
        var answer: ImageAnswer
        if !options.processing.isNone, headers[.ifNoneMatch] != nil {
            // The route asks for the source, then (unless its validators match) the variant: both are recorded, and
            // only once the fast path is sure to answer, so a request it hands to the route is not counted twice.
            guard let source = pipeline.cachedImage(for: imageRequest.original, recording: false) else { return handOver() }
            if let notModified = Self.notModified(headers, variantOf: source, options: options, maxAgeSeconds: maxAgeSeconds) {
                answer = notModified
            } else {
                guard let served = pipeline.cachedImage(for: imageRequest) else { return handOver() }
                answer = Self.answer(served, to: headers, options: options, maxAgeSeconds: maxAgeSeconds)
            }
            pipeline.statistics.record(source)
        } else {
            guard let served = pipeline.cachedImage(for: imageRequest) else { return handOver() }
            if unconditional {
                let prepared = prepare(served, request: imageRequest, options: options, route: route, target: target, readingKey: key)
                recordAnswer(imageRequest, element: element, kind: kind)
                return FastAnswer(head: prepared.head, body: served.bytes ?? ByteBuffer(), prepared: prepared)
            }
            answer = Self.answer(served, to: headers, options: options, maxAgeSeconds: maxAgeSeconds)
        }
        recordAnswer(imageRequest, element: element, kind: kind)
        let response = answer.response
        return FastAnswer(head: response.head, body: answer.body)
    }

    /// The answer to an unconditional request for the image `served` (its head), remembered for the next request with
    /// `target` and `readingKey`.
    private func prepare(_ served: ImageResponse, request: ImageRequest, options: ImageOptions, route: ResolvedImagePaths.Resolved,
                         target: String, readingKey: String?) -> PreparedImageAnswers.Prepared {
        let head = Self.answer(served, to: [:], options: options, maxAgeSeconds: maxAgeSeconds).response.head
        let prepared = PreparedImageAnswers.Prepared(route: route, request: request, options: options, inputs: .init(served), head: head)
        preparedAnswers.remember(prepared, target: target, readingKey: readingKey)
        return prepared
    }

    /// What the route records for an answer besides the pipeline's statistics: the trace, and the photo's availability.
    private func recordAnswer(_ request: ImageRequest, element: Element, kind: ImageKind) {
        trace?.record(request.url)
        if kind == .full { photos.note(element, after: nil) }
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
        let original = ImageRequest(url: url, alternatives: kind == .full ? builder.otherPhotoURLs(for: element) : [])
        let served = try await load(original, photoOf: kind == .full ? element : nil)
        let placeholder = try await load(original.placeholder, photoOf: nil)
        var response = try JSONResponse.make(ImageInfo(served, placeholder: placeholder))
        response.headers[.cacheControl] = "public, max-age=\(maxAgeSeconds)"
        return response
    }

    /// The body of `…/info`: the original's format, sizes, orientation, bytes and ETag, and its placeholder (imgproxy
    /// Pro's names where it has them: `blurhash`, and `average` as `{R, G, B, A}`).
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
        /// The placeholder's parts (`ImagePlaceholder`).
        var blurhash: String
        var thumbhash: String
        /// imgproxy's `average`: the mean colour, 0...255 a channel, alpha too.
        var average: RGBA
        var averageColor: String
        var dominantColor: String
        var lqip: String

        /// imgproxy's colour object.
        struct RGBA: Encodable {
            var R: Int, G: Int, B: Int, A: Int
        }

        /// What `served` (an original) is, and `placeholder` (its placeholder, JSON) says.
        init(_ served: ImageResponse, placeholder: ImageResponse) throws(ServiceError) {
            let header = served.header
            (format, contentType, width, height) = (header.format.rawValue, served.contentType, header.width, header.height)
            (orientation, uprightWidth, uprightHeight) = (header.orientation ?? 1, header.uprightWidth, header.uprightHeight)
            (bytes, etag) = (header.byteCount, served.validators.etag)
            let made = try ImagesController.placeholder(in: placeholder)
            (blurhash, thumbhash, averageColor, dominantColor, lqip) = (made.blurhash, made.thumbhash, made.averageColor, made.dominantColor, made.lqip)
            let color = ImageProcessing.Color(name: made.averageColor) ?? .transparent
            average = RGBA(R: Int(color.red), G: Int(color.green), B: Int(color.blue), A: Int((made.averageAlpha * 255).rounded()))
        }
    }

    /// The pipeline's answer to `request`, as an HTTP error when it fails; a photo's load also tells `photos` whether
    /// the host has it.
    func load(_ request: ImageRequest, photoOf element: Element?) async throws(ServiceError) -> ImageResponse {
        do {
            let response = try await Self.image(for: request, from: pipeline, logger: logger)
            if let element { photos.note(element, after: nil) }
            return response
        } catch {
            if let element { photos.note(element, after: error) }
            throw ServiceError.image(error)
        }
    }

    /// The pipeline's answer to `request`; a failure is logged (unless upstream has no such image or the service is
    /// overloaded: those are the client's answer, not a fault) and rethrown. Catalogue and open-source routes load
    /// through it.
    static func image(for request: ImageRequest, from pipeline: ImagePipeline, logger: Logger) async throws(ImageCoreError) -> ImageResponse {
        do {
            return try await pipeline.image(for: request)
        } catch {
            if !error.isNotFound, error.reason != .overloaded {
                logger.warning("image failed", metadata: ["url": "\(request.url)", "reason": "\(error.reason.rawValue)",
                                                          "message": "\(error.message)"])
            }
            throw error
        }
    }

}

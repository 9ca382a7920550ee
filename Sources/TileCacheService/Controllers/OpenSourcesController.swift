import Foundation
import HTTPTypes
import Hummingbird
import ImageCore
import Logging

/// Any allowed source URL behind imgproxy's URL format (`ImgproxyPath`) and thumbor's (`ThumborPath`, when a
/// thumbor key or unsafe URLs are configured: a path that starts with `unsafe` or a thumbor signature), through the same pipeline, tiers and answers
/// as the catalogue's images. Registered only when `--allowed-sources` allows some: its route is the router's last
/// resort (`**`), so every other route matches first.
///
/// Order of checks, as imgproxy makes them: the path's shape, the signature (403), the options (404), the source
/// against the allow-list (404); then the load, limited to public addresses unless `--allow-private-sources`.
struct OpenSourcesController: Sendable {
    let pipeline: ImagePipeline
    let allowedSources: AllowedSources
    let addresses: AddressRule
    /// Checks the signature segment; nil: any signature is accepted (imgproxy without `IMGPROXY_KEY`).
    let signer: URLSigner?
    let negotiation: FormatNegotiation
    /// Whether client hints fill in what imgproxy URLs leave open (`--client-hints`; thumbor reads none).
    var clientHints = false
    /// `pr:NAME`'s presets, as imgproxy options.
    let presets: [String: [(String, [String])]]
    /// thumbor's security key; nil: signed thumbor URLs are refused.
    let thumborKey: [UInt8]?
    let allowsUnsafeThumborURLs: Bool
    let maxAgeSeconds: Int
    let logger: Logger

    /// Whether thumbor URLs are read at all.
    var servesThumbor: Bool { thumborKey != nil || allowsUnsafeThumborURLs }

    var routes: RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        routes.get("**") { request, _ in try await answer(request) }
        return routes
    }

    /// The source and processing `path` names, once the signature, the options and the allow-list accept it.
    func read(_ path: String, accept: String?, now: Date = Date()) throws(ServiceError) -> ImgproxyPath {
        guard let (info, signature, signedPath) = ImgproxyPath.split(path) else {
            throw ServiceError(.notFound, reason: .invalidURL, message: "Invalid URL: expected /{signature}/{options}/{source}")
        }
        if let signer {
            try signer.verify(pathSignature: signature, signedPath: signedPath)
        } else if thumborKey != nil {
            // An operator who keys thumbor's URLs means sources to be signed: imgproxy's may not go around that.
            throw ServiceError(.forbidden, reason: .missingSignature,
                               message: "imgproxy URLs must be signed here: the service has a thumbor key but no imgproxy key (--signing-key or IMGPROXY_KEY)")
        } else if signature.contains(":") {
            // imgproxy's rule: without a key, a first segment that looks like an option is a forgotten signature.
            throw ServiceError(.forbidden, reason: .badSignature, message: "Malformed signature: the path starts with an option, not a signature")
        }
        let parsed = try ImgproxyPath(signature: signature, signedPath: signedPath, info: info, accept: accept, negotiation: negotiation,
                                  presets: presets, now: now)
        try checkSource(parsed.source, refusal: .notFound)
        return parsed
    }

    /// Refuses a source `--allowed-sources` does not allow, or one that is not a URL the engine fetches, with the
    /// status the URL family refuses with (imgproxy 404, thumbor 400).
    private func checkSource(_ source: String, refusal status: HTTPResponse.Status) throws(ServiceError) {
        guard allowedSources.allows(source) else {
            throw ServiceError(status, reason: .sourceNotAllowed, message: "Source URL is not allowed: \(source.prefix(200))")
        }
        do {
            _ = try RequestURL(source)
        } catch {
            throw ServiceError(status, reason: .invalidURL, message: "Invalid source URL: \(error.message)")
        }
    }

    /// The source and processing of a thumbor path, once its signature (or `unsafe`) and the allow-list accept it:
    /// thumbor's refusals are 400.
    func readThumbor(_ path: String) throws(ServiceError) -> ThumborPath {
        let parsed = try ThumborPath(path)
        try parsed.verify(key: thumborKey, allowsUnsafe: allowsUnsafeThumborURLs)
        try checkSource(parsed.source, refusal: .badRequest)
        return parsed
    }

    private func answer(_ request: Request) async throws -> Response {
        let path = request.uri.path
        if servesThumbor, ThumborPath.looksLikeThumbor(path) {
            let parsed = try readThumbor(path)
            if parsed.meta {
                // thumbor's meta: the operations as JSON, from the original's upright size.
                let served = try await original(parsed.source)
                var response = JSONResponse.make(json: parsed.metaJSON(sourceWidth: served.header.uprightWidth,
                                                                       sourceHeight: served.header.uprightHeight),
                                                 contentType: "application/json")
                response.headers[.cacheControl] = "public, max-age=\(maxAgeSeconds)"
                return response
            }
            return try await answer(request, source: parsed.source, processing: parsed.processing, options: ImageOptions(processing: parsed.processing, negotiated: false), info: false)
        }
        let parsed = try read(path, accept: request.headers[.accept])
        let hinted = clientHints && !parsed.info && parsed.placeholder == nil
        let processing = hinted ? ClientHints(request.headers).applied(to: parsed.processing) : parsed.processing
        var options = ImageOptions(processing: processing, negotiated: parsed.negotiated, placeholder: parsed.placeholder)
        options.variesByHints = hinted
        var response = try await answer(request, source: parsed.source, processing: processing, options: options, info: parsed.info)
        if parsed.immutable, let cacheControl = response.headers[.cacheControl] { response.headers[.cacheControl] = cacheControl + ", immutable" }
        return response
    }

    /// The pipeline's answer for `source` with `processing` (none: the original), as an HTTP error when it fails.
    private func original(_ source: String, processing: ImageProcessing = .none) async throws -> ImageResponse {
        do {
            return try await ImagesController.image(for: ImageRequest(url: source, processing: processing, addresses: addresses),
                                                    from: pipeline, logger: logger)
        } catch {
            throw ServiceError.image(error)
        }
    }

    private func answer(_ request: Request, source: String, processing: ImageProcessing, options: ImageOptions, info: Bool) async throws -> Response {
        let served = try await original(source, processing: info ? .none : processing)
        if info {
            let placeholder = try await original(source, processing: .placeholder(of: .none))
            var response = try JSONResponse.make(ImagesController.ImageInfo(served, placeholder: placeholder))
            response.headers[.cacheControl] = "public, max-age=\(maxAgeSeconds)"
            return response
        }
        return ImagesController.answer(served, to: request.headers, options: options, maxAgeSeconds: maxAgeSeconds).response
    }
}

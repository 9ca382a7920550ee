import Foundation
import HTTPTypes
import Hummingbird
import ImageCore
import Logging

/// Any allowed source URL behind imgproxy's URL format (`ImgproxyPath`), through the same pipeline, tiers and answers
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
    let autoWebP: Bool
    /// `pr:NAME`'s presets, as imgproxy options.
    let presets: [String: [(String, [String])]]
    let maxAgeSeconds: Int
    let logger: Logger

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
        } else if signature.contains(":") {
            // imgproxy's rule: without a key, a first segment that looks like an option is a forgotten signature.
            throw ServiceError(.forbidden, reason: .badSignature, message: "Malformed signature: the path starts with an option, not a signature")
        }
        let parsed = try ImgproxyPath(signature: signature, signedPath: signedPath, info: info, accept: accept, autoWebP: autoWebP,
                                  presets: presets, now: now)
        guard allowedSources.allows(parsed.source) else {
            throw ServiceError(.notFound, reason: .sourceNotAllowed, message: "Source URL is not allowed: \(parsed.source.prefix(200))")
        }
        do {
            _ = try RequestURL(parsed.source)
        } catch {
            throw ServiceError(.notFound, reason: .invalidURL, message: "Invalid source URL: \(error.message)")
        }
        return parsed
    }

    private func answer(_ request: Request) async throws -> Response {
        let parsed = try read(request.uri.path, accept: request.headers[.accept])
        let options = ImageOptions(processing: parsed.processing, negotiated: parsed.negotiated)
        let imageRequest = ImageRequest(url: parsed.source, processing: parsed.info ? .none : parsed.processing, addresses: addresses)
        let served: ImageResponse
        do {
            served = try await pipeline.image(for: imageRequest)
        } catch {
            if !error.isNotFound, error.reason != .overloaded {
                logger.warning("open source failed", metadata: ["url": "\(parsed.source)", "reason": "\(error.reason.rawValue)",
                                                                 "message": "\(error.message)"])
            }
            throw ServiceError.image(error)
        }
        if parsed.info {
            var response = try JSONResponse.make(ImagesController.ImageInfo(served))
            response.headers[.cacheControl] = "public, max-age=\(maxAgeSeconds)"
            return response
        }
        return ImagesController.answer(served, to: request.headers, options: options, maxAgeSeconds: maxAgeSeconds).response
    }
}

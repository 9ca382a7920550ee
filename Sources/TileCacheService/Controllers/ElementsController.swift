import Foundation
import HTTPTypes
import Hummingbird
import ImageCore
import NIOCore

/// `/api/v1/elements`: the catalogue in the seed API's shape, and each element's thumbnail and photo.
struct ElementsController: Sendable {
    let dependencies: ServiceDependencies

    func register(on router: Router<BasicRequestContext>) {
        router.get("/api/v1/elements") { request, _ in try list(request) }
        router.head("/api/v1/elements") { request, _ in try list(request).headOnly() }
        router.get("/api/v1/elements/:id") { request, context in try one(request, context) }
        router.head("/api/v1/elements/:id") { request, context in try one(request, context).headOnly() }
        for (path, kind) in [("thumbnail", ImageKind.thumbnail), ("image", .full)] {
            router.get("/api/v1/elements/:id/\(path)") { request, context in try await image(request, context, kind: kind) }
            router.head("/api/v1/elements/:id/\(path)") { request, context in try await image(request, context, kind: kind).headOnly() }
        }
    }

    private func list(_ request: Request) throws -> Response {
        try rejectUnknownQueryParameters(request, allowed: [])
        let base = Self.baseURL(of: request)
        let body = ["elements": dependencies.catalogue.elements.map { ElementResource($0, baseURL: base) }]
        return try JSONResponse.make(body)
    }

    private func one(_ request: Request, _ context: BasicRequestContext) throws -> Response {
        try rejectUnknownQueryParameters(request, allowed: [])
        return try JSONResponse.make(ElementResource(try element(context), baseURL: Self.baseURL(of: request)))
    }

    private func image(_ request: Request, _ context: BasicRequestContext, kind: ImageKind) async throws -> Response {
        try rejectUnknownQueryParameters(request, allowed: ["w"])
        let element = try element(context)
        var width: Int?
        if let text = request.uri.queryParameters.get("w") {
            guard let value = Int(text), ImageResizer.widthRange.contains(value) else {
                throw ServiceError(.badRequest, reason: "bad-width",
                                   message: "w must be a whole number from \(ImageResizer.widthRange.lowerBound) to \(ImageResizer.widthRange.upperBound), got '\(text)'")
            }
            width = value
        }
        dependencies.trace?.record(dependencies.configuration.builder.url(for: element, kind: kind))
        let served = try await dependencies.images.image(element, kind: kind, width: width)
        var headers: HTTPFields = [
            .eTag: served.etag, .lastModified: served.lastModified,
            .cacheControl: "public, max-age=\(dependencies.configuration.maxAgeSeconds)",
        ]
        headers[Self.sourceHeader] = served.source
        if Self.isNotModified(request, etag: served.etag, lastModified: served.lastModified) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = served.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: served.body))
    }

    static let sourceHeader = HTTPField.Name("X-TileCache-Source")!

    /// If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2).
    static func isNotModified(_ request: Request, etag: String, lastModified: String) -> Bool {
        let tags = request.headers[values: .ifNoneMatch].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        if !tags.isEmpty {
            return tags.contains { $0 == "*" || $0 == etag || $0 == "W/" + etag }
        }
        guard let since = request.headers[.ifModifiedSince].flatMap(HTTPDate.date(from:)),
              let modified = HTTPDate.date(from: lastModified) else { return false }
        return modified <= since
    }

    private func element(_ context: BasicRequestContext) throws -> Element {
        let id = context.parameters.get("id") ?? ""
        guard id.count <= 64, let element = dependencies.catalogue.element(matching: id) else {
            throw ServiceError(.notFound, reason: "unknown-element",
                               message: "no element '\(id.prefix(64))': use an atomic number (1-118), a symbol or a name")
        }
        return element
    }

    /// `http://<Host>` of the request, so catalogue URLs point back at this service; empty when there is no Host.
    static func baseURL(of request: Request) -> String {
        guard let authority = request.head.authority, !authority.isEmpty,
              authority.allSatisfy({ $0.isLetter || $0.isNumber || ".-:[]".contains($0) }) else { return "" }
        return "http://\(authority)"
    }
}

/// One element in the seed element API's shape, with image URLs pointing at this service.
struct ElementResource: Encodable {
    let element: Element
    let baseURL: String

    init(_ element: Element, baseURL: String) {
        self.element = element
        self.baseURL = baseURL
    }

    enum Keys: String, CodingKey {
        case name, symbol, number, atomic_mass, category, period, group, phase, melt, boil, density, discovered_by, named_by
        case appearance, block, electron_configuration, xpos, ypos, thumbnail_url, image_url, has_image
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(element.name, forKey: .name)
        try container.encode(element.symbol, forKey: .symbol)
        try container.encode(element.number, forKey: .number)
        try container.encode(element.atomicMass, forKey: .atomic_mass)
        try container.encode(element.category, forKey: .category)
        try container.encode(element.period, forKey: .period)
        try container.encode(element.group, forKey: .group)
        try container.encode(element.phase, forKey: .phase)
        try container.encode(element.melt, forKey: .melt)
        try container.encode(element.boil, forKey: .boil)
        try container.encode(element.density, forKey: .density)
        try container.encode(element.discoveredBy, forKey: .discovered_by)
        try container.encode(element.namedBy, forKey: .named_by)
        try container.encode(element.appearance, forKey: .appearance)
        try container.encode(element.block, forKey: .block)
        try container.encode(element.electronConfiguration, forKey: .electron_configuration)
        try container.encode(element.xpos, forKey: .xpos)
        try container.encode(element.ypos, forKey: .ypos)
        try container.encode("\(baseURL)/api/v1/elements/\(element.number)/thumbnail", forKey: .thumbnail_url)
        try container.encode("\(baseURL)/api/v1/elements/\(element.number)/image", forKey: .image_url)
        try container.encode(!element.hasKnownMissingPhoto, forKey: .has_image)
    }
}

/// Refuses query parameters a route does not know, so a typo never silently changes the answer (400).
func rejectUnknownQueryParameters(_ request: Request, allowed: Set<String>) throws {
    for (name, _) in request.uri.queryParameters where !allowed.contains(String(name)) {
        throw ServiceError(.badRequest, reason: "unknown-parameter",
                           message: "unknown query parameter '\(String(name).prefix(64))'" + (allowed.isEmpty ? "" : " (allowed: \(allowed.sorted().joined(separator: ", ")))"))
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

extension Response {
    /// The same response for a HEAD request: headers (Content-Length included), no body.
    func headOnly() -> Response {
        var headers = self.headers
        if headers[.contentLength] == nil, let length = body.contentLength { headers[.contentLength] = String(length) }
        return Response(status: status, headers: headers, body: .init())
    }
}

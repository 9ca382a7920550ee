import Catalogue
import Foundation
import HTTPTypes
import Hummingbird
import ImageCore
import Logging
import NIOCore

/// The element API in the seed's shape: `/api/v1/elements` (elements 1-100), `/api/v1/elements_remaining` (the rest)
/// and one element by id, each record with its image URLs and whether a photo is served. The images themselves are
/// `ImagesController`'s.
struct ElementsController: Sendable {
    let catalogue: ElementCatalogue
    let elements: ElementResolver
    /// What the photo host said about each photo (`has_image`).
    let photos: PhotoAvailability
    /// The base of the JSON's absolute URLs (`--public-url`); nil: paths.
    let publicURL: String?
    /// Whether `--trusted-proxies` is set: only then do `X-Forwarded-Host` and `-Proto` reach the router (from those
    /// proxies alone) and make the JSON's absolute URLs.
    let trustsProxies: Bool
    /// The thumbnails' placeholders, added to each record of the answer (after the list query: they are neither
    /// searched, filtered nor sorted by).
    let placeholders: ElementPlaceholders?

    /// The seed API's first list holds elements 1 to 100; `elements_remaining` holds the rest.
    static let firstListRange = 1...100

    /// GET routes (HEAD comes from the router).
    var routes: RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        routes.get("/api/v1/elements") { request, _ in try await list(request, numbers: Self.firstListRange) }
        routes.get("/api/v1/elements_remaining") { request, _ in
            try await list(request, numbers: (Self.firstListRange.upperBound + 1)...Int.max)
        }
        routes.get("/api/v1/elements/:id") { request, context in try await one(request, context) }
        return routes
    }

    private func list(_ request: Request, numbers: ClosedRange<Int>) async throws -> Response {
        let base = baseURL(request)
        let listed = catalogue.elements.filter { numbers.contains($0.number) }
        let records = listed.map { ElementRecord.make($0, baseURL: base, hasImage: hasImage($0)) }
        let query = try ListQuery(QueryItems(request.uri.query), fields: ElementRecord.fields)
        var (page, total) = query.apply(to: records)
        if let placeholders {
            let numbers = page.map { record -> Int? in
                guard case .integer(let number)? = record["number"] else { return nil }
                return Int(number)
            }
            let found = await placeholders.thumbnails(of: numbers.compactMap { $0.flatMap(catalogue.element(number:)) },
                                                      within: ElementPlaceholders.pageWait)
            for (index, number) in zip(page.indices, numbers) {
                ElementRecord.addPlaceholder(number.flatMap { found[$0] }, to: &page[index])
            }
        }
        var response = try JSONResponse.make(page)
        response.headers[ListQuery.totalCountHeader] = String(total)
        return response
    }

    private func one(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let element = try elements.element(context.parameters.get("id") ?? "")
        var record = ElementRecord.make(element, baseURL: baseURL(request), hasImage: hasImage(element))
        if let placeholders {
            let found = await placeholders.thumbnails(of: [element], within: ElementPlaceholders.pageWait)
            ElementRecord.addPlaceholder(found[element.number], to: &record)
        }
        return try JSONResponse.make(record)
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
}

/// One element as the seed API served it: every key of its element JSON (absent values as `null`, `id` a string),
/// plus TileCache's own (`group`, `block`, `electron_configuration`, `thumbnail_url`, `image_url`, `has_image`, and the
/// thumbnail's placeholder: `thumbnail_blurhash`, `thumbnail_thumbhash`, `thumbnail_color`, `thumbnail_lqip`).
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

    /// The thumbnail placeholder's keys, `null` when there is none (seed clients ignore keys they do not know).
    static func addPlaceholder(_ placeholder: ImagePlaceholder?, to record: inout [String: JSONValue]) {
        record["thumbnail_blurhash"] = .nullable(placeholder?.blurhash)
        record["thumbnail_thumbhash"] = .nullable(placeholder?.thumbhash)
        record["thumbnail_color"] = .nullable(placeholder?.dominantColor)
        record["thumbnail_lqip"] = .nullable(placeholder?.lqip)
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

    /// JSON written elsewhere, to the letter (thumbor's `meta`), with the content type its contract says.
    static func make(json text: String, contentType: String) -> Response {
        Response(status: .ok, headers: [.contentType: contentType], body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

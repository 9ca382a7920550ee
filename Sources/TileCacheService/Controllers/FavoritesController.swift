import Foundation
import Hummingbird
import ImageCore

/// `/api/v1/favorites`: the seed's favourites API over SQLite.
struct FavoritesController: Sendable {
    let store: FavoritesStore
    let catalogue: ElementCatalogue
    static let maxFieldLength = 100
    static let maxBodyBytes = 16 * 1024

    struct NewFavorite: Decodable {
        var favoritedBy: String?
        var elementName: String?
        var elementSymbol: String?
    }

    func register(on router: Router<BasicRequestContext>) {
        router.post("/api/v1/favorites") { request, context in try await add(request, context) }
        router.get("/api/v1/favorites") { request, _ in try list(request) }
    }

    private func add(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: Self.maxBodyBytes)
        } catch {
            throw ServiceError(.contentTooLarge, reason: "body-too-large", message: "the request body is larger than \(Self.maxBodyBytes) bytes")
        }
        let input: NewFavorite
        do {
            input = try JSONDecoder().decode(NewFavorite.self, from: Data(buffer: buffer))
        } catch {
            throw ServiceError(.badRequest, reason: "bad-json", message: "the body must be a JSON object with favoritedBy, elementName and elementSymbol")
        }
        func field(_ value: String?, _ name: String) throws -> String {
            guard let value = value?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else {
                throw ServiceError(.badRequest, reason: "missing-field", message: "\(name) is required")
            }
            guard value.count <= Self.maxFieldLength else {
                throw ServiceError(.badRequest, reason: "field-too-long", message: "\(name) is longer than \(Self.maxFieldLength) characters")
            }
            return value
        }
        let person = try field(input.favoritedBy, "favoritedBy")
        let name = try field(input.elementName, "elementName")
        let symbol = try field(input.elementSymbol, "elementSymbol")
        guard let element = catalogue.element(matching: name), element.symbol.lowercased() == symbol.lowercased() else {
            throw ServiceError(.unprocessableContent, reason: "unknown-element",
                               message: "no element named '\(name)' with symbol '\(symbol)'")
        }
        return try JSONResponse.make(try store.add(favoritedBy: person, element: element), status: .created)
    }

    private func list(_ request: Request) throws -> Response {
        try rejectUnknownQueryParameters(request, allowed: ["favoritedBy"])
        let person = request.uri.queryParameters.get("favoritedBy")
        return try JSONResponse.make(["favorites": try store.list(favoritedBy: person)])
    }
}

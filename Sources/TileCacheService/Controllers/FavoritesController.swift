import Catalogue
import Foundation
import Hummingbird
import ImageCore
import Logging
import NIOCore
import NIOFoundationCompat

/// `/api/v1/favorites`: the seed's favourites resource over SQLite, with the mock API's semantics (see `FavoriteBody`).
struct FavoritesController: Sendable {
    let store: any FavoritesRepository
    let catalogue: ElementCatalogue
    let logger = Logger(label: "tilecache.favorites")

    /// The favourites resource's routes (HEAD comes from the router).
    var routes: RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        routes.post("/api/v1/favorites") { request, _ in try await add(request) }
        routes.get("/api/v1/favorites") { request, _ in try await list(request) }
        routes.get("/api/v1/favorites/:id") { _, context in try JSONResponse.make(FavoriteBody.record(try await find(context))) }
        routes.put("/api/v1/favorites/:id") { request, context in try await replace(request, context) }
        routes.delete("/api/v1/favorites/:id") { _, context in
            let id = try await find(context).id!
            guard let removed = try await database({ try await store.remove(id: id) }) else { throw notFound(String(id)) }
            return try JSONResponse.make(FavoriteBody.record(removed))
        }
        return routes
    }

    private func add(_ request: Request) async throws -> Response {
        let checked = try FavoriteBody.check(try await body(of: request), catalogue: catalogue)
        let stored = try await database { try await store.add(favoritedBy: checked.favoritedBy, elementNumber: checked.element.number, body: checked.text) }
        var response = try JSONResponse.make(FavoriteBody.record(stored), status: .created)
        response.headers[.location] = "/api/v1/favorites/\(stored.id!)"
        return response
    }

    private func replace(_ request: Request, _ context: BasicRequestContext) async throws -> Response {
        let id = try await find(context).id!
        let checked = try FavoriteBody.check(try await body(of: request), catalogue: catalogue)
        guard let stored = try await database({
            try await store.replace(id: id, favoritedBy: checked.favoritedBy, elementNumber: checked.element.number, body: checked.text)
        }) else { throw notFound(String(id)) }
        return try JSONResponse.make(FavoriteBody.record(stored))
    }

    /// The page size of `GET /api/v1/favorites` when `limit` is not given, and the largest `limit`.
    static let pageSize = 100

    /// `GET /api/v1/favorites`: a page (100 by default, at most 100) and `X-Total-Count`. The plain list and one
    /// person's (`?favoritedBy=`) are read a page at a time from the database; other queries (`search`, `sortBy`,
    /// other filters) are applied to the person's favourites, or to all of them when no person is named.
    private func list(_ request: Request) async throws -> Response {
        let query = QueryItems(request.uri.query)
        let named = query.items.filter { !ListQuery.reserved.contains($0.name) }.map(\.name)
        let page: [[String: JSONValue]], total: Int
        if query["sortBy"] == nil, query["search"] == nil, named.allSatisfy({ $0 == "favoritedBy" }), named.count <= 1 {
            let parsed = try ListQuery(query, fields: FavoriteBody.knownFields, defaultLimit: Self.pageSize, maxLimit: Self.pageSize)
            let read = try await database { try await store.page(favoritedBy: query["favoritedBy"], offset: parsed.offset, limit: parsed.limit!) }
            (page, total) = (read.favorites.map(FavoriteBody.record), read.total)
        } else {
            let records = try await database { try await store.list(favoritedBy: query["favoritedBy"]) }.map(FavoriteBody.record)
            let fields = records.reduce(into: FavoriteBody.knownFields) { $0.formUnion($1.keys) }
            (page, total) = try ListQuery(query, fields: fields, defaultLimit: Self.pageSize, maxLimit: Self.pageSize).apply(to: records)
        }
        var response = try JSONResponse.make(page)
        response.headers[ListQuery.totalCountHeader] = String(total)
        return response
    }

    private func find(_ context: BasicRequestContext) async throws -> Favorite {
        let text = context.parameters.get("id") ?? ""
        // Digits only: Int64 alone would also take "+7" and "-7".
        guard text.count <= 18, text.allSatisfy({ $0.isASCII && $0.isNumber }), let id = Int64(text),
              let favorite = try await database({ try await store.favorite(id: id) }) else { throw notFound(text) }
        return favorite
    }

    private func notFound(_ id: String) -> ServiceError {
        ServiceError(.notFound, reason: .unknownFavorite, message: "no favourite with id '\(id.prefix(64))'")
    }

    /// The body of a POST or PUT, which must say it is JSON (`application/json`, or `application/…+json`; parameters
    /// such as `charset` are fine). The check is not about parsing: a page may send a `text/plain`, form or multipart
    /// body to another origin without a preflight, so refusing those refuses the writes a page could make unseen.
    private func body(of request: Request) async throws(ServiceError) -> Data {
        let mediaType = (request.headers[.contentType] ?? "").split(separator: ";", maxSplits: 1).first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        guard mediaType == "application/json" || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json")) else {
            let given = request.headers[.contentType].map { "'\($0.prefix(100))'" } ?? "none"
            throw ServiceError(.unsupportedMediaType, reason: .badContentType,
                               message: "send the favourite as JSON, with Content-Type: application/json (the request's Content-Type: \(given))")
        }
        do {
            return Data(buffer: try await request.body.collect(upTo: FavoriteBody.maxBytes))
        } catch is NIOTooManyBytesError {
            throw ServiceError(.contentTooLarge, reason: .bodyTooLarge, message: "the request body is larger than \(FavoriteBody.maxBytes) bytes")
        } catch {
            // The parser's error (a malformed chunk size, a body cut short): the client's, not a size.
            throw ServiceError(.badRequest, reason: .badBody, message: "the request body could not be read: its framing is malformed (chunk sizes, or a body shorter than Content-Length)")
        }
    }

    /// Runs a database call; a person's quota reached is 409 `favorite-quota`; another failure is logged and answered
    /// 503, naming no internals.
    private func database<T>(_ call: () async throws -> T) async throws(ServiceError) -> T {
        do {
            return try await call()
        } catch let quota as FavoritesQuotaExceeded {
            throw ServiceError(.conflict, reason: .favoriteQuota, message: quota.description)
        } catch {
            logger.error("favourites database call failed", metadata: ["error": "\(String(reflecting: error))"])
            throw ServiceError(.serviceUnavailable, reason: .database, message: "the favourites database failed: try again",
                               headers: [.retryAfter: "1"])
        }
    }
}

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
    /// Favourites read from the database at a time by a query it does not answer.
    static let scanBatch = 100
    /// How deep a sorted query over every person's favourites may page (`page` x `limit`; 400 `bad-page` beyond), as
    /// Elasticsearch's `max_result_window`: a sorted scan keeps the records up to the page's end in memory.
    static let maxSortedWindow = 10_000

    /// `GET /api/v1/favorites`: a page (100 by default, at most 100) and `X-Total-Count`. The plain list and one
    /// person's (`?favoritedBy=`) are read a page at a time from the database; other queries (`search`, `sortBy`,
    /// other filters) scan the person's favourites, or all of them when no person is named, a batch at a time,
    /// keeping only what the page needs (`ListQuery.Scan`).
    private func list(_ request: Request) async throws -> Response {
        let query = QueryItems(request.uri.query)
        let named = query.items.filter { !ListQuery.reserved.contains($0.name) }.map(\.name)
        let page: [[String: JSONValue]], total: Int
        if query["sortBy"] == nil, query["search"] == nil, named.allSatisfy({ $0 == "favoritedBy" }), named.count <= 1 {
            let parsed = try ListQuery(query, fields: FavoriteBody.knownFields, defaultLimit: Self.pageSize, maxLimit: Self.pageSize)
            let read = try await database { try await store.page(favoritedBy: query["favoritedBy"], offset: parsed.offset, limit: parsed.limit!) }
            (page, total) = (read.favorites.map(FavoriteBody.record), read.total)
        } else {
            (page, total) = try await scanned(query, named: named)
        }
        var response = try JSONResponse.make(page)
        response.headers[ListQuery.totalCountHeader] = String(total)
        return response
    }

    /// A list query the database does not answer, over a scan of the favourites (one person's when named).
    ///
    /// Which query names are fields depends on what is stored (a filter on a key no favourite has is ignored, as mock
    /// APIs do), so names a favourite may lack are first looked for, a batch at a time until each is found.
    private func scanned(_ query: QueryItems, named: [String]) async throws -> (page: [[String: JSONValue]], total: Int) {
        let person = query["favoritedBy"]
        let asked = Set(named + [query["sortBy"] ?? ""].filter { !$0.isEmpty })
        // page, limit and order are checked before any database work.
        _ = try ListQuery(query, fields: FavoriteBody.knownFields.union(asked), defaultLimit: Self.pageSize, maxLimit: Self.pageSize)
        var fields = FavoriteBody.knownFields
        var unseen = asked.subtracting(fields)
        if !unseen.isEmpty {
            try await scan(favoritedBy: person) { record in
                let found = unseen.filter { record[$0] != nil }
                fields.formUnion(found)
                unseen.subtract(found)
                return !unseen.isEmpty
            }
        }
        let parsed = try ListQuery(query, fields: fields, defaultLimit: Self.pageSize, maxLimit: Self.pageSize)
        if person == nil, parsed.sortBy != nil, let window = parsed.window, window > Self.maxSortedWindow {
            throw ServiceError(.badRequest, reason: .badPage, message: """
                a sorted list of every person's favourites reaches \(Self.maxSortedWindow) deep at most (page x limit): \
                name a person (favoritedBy=) or narrow it with search or a filter
                """)
        }
        var scan = ListQuery.Scan(parsed)
        try await self.scan(favoritedBy: person) { record in
            scan.add(record)
            return true
        }
        return scan.result
    }

    /// Reads the favourites (one person's when named), oldest first, `scanBatch` at a time by the primary key, and
    /// gives each to `visit` until it returns false.
    private func scan(favoritedBy person: String?, _ visit: ([String: JSONValue]) -> Bool) async throws(ServiceError) {
        var after: Int64 = 0
        while true {
            let batch = try await database { try await store.list(favoritedBy: person, after: after, limit: Self.scanBatch) }
            for favorite in batch {
                guard visit(FavoriteBody.record(favorite)) else { return }
            }
            guard batch.count == Self.scanBatch, let last = batch.last?.id else { return }
            after = last
        }
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

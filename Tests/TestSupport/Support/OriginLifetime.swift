public import TileCacheOrigin

/// Runs `body` against a fresh loopback origin and shuts the origin down afterwards, whether `body` returns or throws.
public func withOrigin<T>(_ configure: (inout OriginServer.Configuration) -> Void = { _ in },
                          _ body: (OriginServer) async throws -> T) async throws -> T {
    var configuration = OriginServer.Configuration()
    configure(&configuration)
    return try await withOrigin(configuration, body)
}

/// Runs `body` against a fresh loopback origin configured as `configuration`, then shuts the origin down.
public func withOrigin<T>(_ configuration: OriginServer.Configuration, _ body: (OriginServer) async throws -> T) async throws -> T {
    let origin = try await OriginServer.start(configuration)
    do {
        let result = try await body(origin)
        await origin.shutdown()
        return result
    } catch {
        await origin.shutdown()
        throw error
    }
}

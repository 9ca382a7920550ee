import Catalogue
import ImageCore
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

/// Renders the thumbnails of the fault matrix's elements into the origin's process-wide image cache, once per test
/// process, through a plain origin. A matrix origin then renders (almost) nothing while it serves: rendering runs on
/// the origin's one thread, and on a loaded machine a cut-off body's close waited behind renders until the client's
/// timeout came first (a `truncated` case reported as `timeout`; the other cause of that, a child process holding the
/// origin's socket open, is gone with `spawnProcess`'s closing of inherited descriptors).
public func prerenderFaultMatrixImages() async throws {
    try await prerendered.value {
        try await withOrigin { origin in
            let engine = TransferEngine()
            for index in FaultMatrix.cases.indices {
                _ = try await engine.perform(TransferRequest(url: origin.urlBuilder.thumbnailURL(for: FaultMatrix.element(ofCase: index))))
            }
        }
    }
}

private let prerendered = OncePerProcess<Void>()

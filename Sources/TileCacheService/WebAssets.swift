import Foundation
import Hummingbird

/// The web front end: files from the package's `Web` resources, read once at start and served from memory.
public struct WebAssets: Sendable {
    private let files: [String: (type: String, bytes: [UInt8])]

    /// Loads `index.html`, `app.js` and `app.css` from the bundle.
    public init() throws {
        var files: [String: (String, [UInt8])] = [:]
        for (name, type) in [("index.html", "text/html; charset=utf-8"), ("app.js", "text/javascript; charset=utf-8"),
                             ("app.css", "text/css; charset=utf-8")] {
            guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Web"),
                  let data = FileManager.default.contents(atPath: url.path) else {
                throw ServiceError(.internalServerError, reason: .missingAsset, message: "web asset \(name) is missing from the bundle")
            }
            files[name] = (type, [UInt8](data))
        }
        self.files = files
    }

    /// `/`, `/app.js` and `/app.css` (HEAD comes from the router).
    var routes: RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        for (path, name) in [("/", "index.html"), ("/app.js", "app.js"), ("/app.css", "app.css")] {
            guard let file = files[name] else { continue }
            let response: @Sendable () -> Response = { Response(status: .ok, headers: [.contentType: file.type, .cacheControl: "no-cache"],
                                      body: .init(byteBuffer: ByteBuffer(bytes: file.bytes))) }
            routes.get(RouterPath(stringLiteral: path)) { _, _ in response() }
        }
        return routes
    }
}

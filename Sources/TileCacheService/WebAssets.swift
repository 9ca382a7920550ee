import HTTPTypes
import Hummingbird

/// The web front end (`index.html`, `app.js`, `app.css`) and the OpenAPI document, compiled into the binary
/// (`WebAssets+Embedded.swift`, written by `scripts/embed-web.py` from `Web/` and `docs/openapi.yaml`), so an installed
/// binary needs no files beside it.
public struct WebAssets: Sendable {
    private let files: [String: (type: String, bytes: [UInt8])]

    public init() {
        var files: [String: (String, [UInt8])] = [:]
        for file in Self.embedded { files[file.name] = (file.type, Array(file.text.utf8)) }
        self.files = files
    }

    /// The bytes of one embedded file (`index.html`, `app.js`, `app.css`, `openapi.yaml`), for tests.
    public func bytes(of name: String) -> [UInt8]? { files[name]?.bytes }

    /// What the page and its files are sent with: only the service's own scripts, styles, images and API (no inline
    /// script, no other origin), never framed by another page (clickjacking), never sniffed as another type.
    static let securityHeaders: HTTPFields = [
        .contentSecurityPolicy: "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
            + "form-action 'self'; frame-ancestors 'none'",
        HTTPField.Name("X-Frame-Options")!: "DENY",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "same-origin",
    ]

    /// `/`, `/app.js`, `/app.css` and `/openapi.yaml` (HEAD comes from the router); with `clientHints`, the page asks
    /// for them (`Accept-CH`: a browser sends hints on a page's images only once the page's own answer asked).
    func routes(clientHints: Bool) -> RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        for (path, name) in [("/", "index.html"), ("/app.js", "app.js"), ("/app.css", "app.css"), ("/openapi.yaml", "openapi.yaml")] {
            guard let file = files[name] else { continue }
            var headers: HTTPFields = [.contentType: file.type, .cacheControl: "no-cache"]
            headers.append(contentsOf: Self.securityHeaders)
            if clientHints, name == "index.html" { headers[ImagesController.acceptCH] = ClientHints.accepted }
            let response: @Sendable () -> Response = { [headers] in
                Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: file.bytes)))
            }
            routes.get(RouterPath(stringLiteral: path)) { _, _ in response() }
        }
        return routes
    }
}

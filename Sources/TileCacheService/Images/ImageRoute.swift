import Catalogue
import Hummingbird

/// One route that answers an element's image: its path as the router matches it, the kind of image, and how the path
/// names the element. `ImageRoute.all` is the one table of them: `ImagesController` registers each with the router,
/// and the cached-image fast path resolves paths against the same entries in Hummingbird's own route trie, so the two
/// can never match differently.
struct ImageRoute: Sendable {
    /// The path, in Hummingbird's syntax (`:id` a parameter, `{name}.jpg` a parameter with a suffix).
    let path: RouterPath
    let kind: ImageKind
    /// The element the path's parameters name; throws 404 `unknown-element` when none.
    let element: @Sendable (ElementResolver, Parameters) throws(ServiceError) -> Element

    /// The API's two image routes per element, and the seed's two image hosts' paths with the host swapped
    /// (`/periodictable/Tiles/NNN/s7.JPG`, `/<lowercased name>.jpg` and `/images-of-elements/<name>.jpg`).
    static let all: [ImageRoute] = [
        ImageRoute(path: "/api/v1/elements/:id/thumbnail", kind: .thumbnail) { elements, parameters throws(ServiceError) in
            try elements.element(parameters.get("id") ?? "")
        },
        ImageRoute(path: "/api/v1/elements/:id/image", kind: .full) { elements, parameters throws(ServiceError) in
            try elements.element(parameters.get("id") ?? "")
        },
        ImageRoute(path: "/periodictable/Tiles/:number/s7.JPG", kind: .thumbnail) { elements, parameters throws(ServiceError) in
            try elements.tile(parameters.get("number") ?? "")
        },
        ImageRoute(path: "/{name}.jpg", kind: .full) { elements, parameters throws(ServiceError) in
            try elements.photo(parameters.get("name") ?? "")
        },
        ImageRoute(path: "/images-of-elements/{name}.jpg", kind: .full) { elements, parameters throws(ServiceError) in
            try elements.photo(parameters.get("name") ?? "")
        },
    ]

    /// How the router matches paths; the fast path's trie is built with the same options.
    static let routerOptions: RouterOptions = .autoGenerateHeadEndpoints
}

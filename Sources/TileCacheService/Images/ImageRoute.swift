import Catalogue
import Hummingbird
import NIOConcurrencyHelpers

/// One route that answers an element's image: its path as the router matches it, the kind of image, and how the path
/// names the element. `ImageRoute.all` is the one table of them: `ImagesController` registers each with the router,
/// and the cached-image fast path resolves paths against the same entries in Hummingbird's own route trie, so the two
/// can never match differently.
struct ImageRoute: Sendable {
    /// The path, in Hummingbird's syntax (`:id` a parameter, `{name}.jpg` a parameter with a suffix).
    let path: RouterPath
    /// `path` as text, the route's label in metrics and logs (made once: `RouterPath.description` builds it anew).
    let template: String
    let kind: ImageKind
    /// The element the path's parameters name; throws 404 `unknown-element` when none.
    let element: @Sendable (ElementResolver, Parameters) throws(ServiceError) -> Element

    init(path: RouterPath, kind: ImageKind, element: @escaping @Sendable (ElementResolver, Parameters) throws(ServiceError) -> Element) {
        (self.path, self.template, self.kind, self.element) = (path, path.description, kind, element)
    }

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

/// The fast path's memo of resolved image paths: a path the route trie and the element lookup resolved before, with
/// what they gave (both are pure functions of the path: the table and the catalogue never change while serving). The
/// trie's walk and its parameters cost more than the rest of a cached answer's route work (perf, 2026-11-27: 9.6% of
/// the service's CPU under wrk on one cached thumbnail). Only resolved paths are kept, at most `capacity`; when full it
/// starts again empty, so paths a client invents cannot grow it.
final class ResolvedImagePaths: Sendable {
    /// A class, so that the answers remembered for every target of a path (`PreparedImageAnswers`) share one: the element
    /// alone is 328 bytes (the serve soak's mix has eight targets a path: 2,187 -> 1,805 bytes a remembered answer,
    /// `malloc_stats` around the first memory hits of its 1,656 targets).
    final class Resolved: Sendable {
        let route: ImageRoute
        let element: Element

        init(route: ImageRoute, element: Element) { (self.route, self.element) = (route, element) }
    }

    static let capacity = 4096
    private let paths = NIOLockedValueBox<[String: Resolved]>([:])

    /// How many paths are remembered.
    var count: Int { paths.withLockedValue { $0.count } }

    func resolved(_ path: String, resolve: () -> Resolved?) -> Resolved? {
        if let known = paths.withLockedValue({ $0[path] }) { return known }
        guard let resolved = resolve() else { return nil }
        paths.withLockedValue { paths in
            if paths.count >= Self.capacity { paths.removeAll(keepingCapacity: true) }
            paths[path] = resolved
        }
        return resolved
    }
}

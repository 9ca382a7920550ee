import Catalogue
import Hummingbird

/// The element a request's path names, as the seed's API and image hosts name them; an unknown one is 404
/// `unknown-element` with a message that says how to name it. One home for the element and image routes.
struct ElementResolver: Sendable {
    let catalogue: ElementCatalogue

    /// The element an id names: atomic number, symbol, name or another spelling of the name, any case.
    func element(_ id: String) throws(ServiceError) -> Element {
        guard id.count <= 64, let element = catalogue.element(matching: id) else {
            throw ServiceError(.notFound, reason: .unknownElement,
                               message: "no element '\(id.prefix(64))': use an atomic number (1-118), a symbol or a name")
        }
        return element
    }

    /// The element of a tile path segment: three digits, `001` to `118`, as the thumbnail host names them.
    func tile(_ segment: String) throws(ServiceError) -> Element {
        guard let element = ImageURLBuilder.element(tile: segment, in: catalogue) else {
            throw ServiceError(.notFound, reason: .unknownElement,
                               message: "no tile '\(segment.prefix(64))': tiles are numbered with three digits, 001 to 118")
        }
        return element
    }

    /// The element of a photo's file name (before `.jpg`): the lowercased name, or another spelling of it (`caesium`).
    func photo(_ name: String) throws(ServiceError) -> Element {
        guard let element = ImageURLBuilder.element(photo: name, in: catalogue) else {
            let hint = catalogue.element(matching: name).map { ": the photo of \($0.name) is /\($0.name.lowercased()).jpg" } ?? ""
            throw ServiceError(.notFound, reason: .unknownElement, message: "no photo '\(name.prefix(64)).jpg'\(hint)")
        }
        return element
    }
}

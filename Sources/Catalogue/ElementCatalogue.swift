import Foundation

/// The 118 elements, embedded in the package (no network needed), with look-up by number, symbol or name.
///
/// Derived from the seed element API's data set (Periodic-Table-JSON, CC BY-SA 3.0): every fact it served, element 119
/// left out (docs/catalogue.md).
public struct ElementCatalogue: Sendable {
    /// Atomic numbers from this one up have no full-size photo upstream.
    public static let firstNumberWithoutPhoto = 90

    /// Other spellings of catalogue names (lowercased), by the catalogue's own: the photo host's and other English
    /// spellings. Look-ups accept them, and a missing photo is tried under them.
    public static let otherSpellings: [String: [String]] = [
        "cesium": ["caesium"], "aluminium": ["aluminum"], "sulfur": ["sulphur"],
    ]

    /// The built-in catalogue.
    public static let standard = ElementCatalogue(elements: builtInElements)

    /// All elements, in atomic-number order.
    public let elements: [Element]
    /// Index into `elements` by lowercased number, symbol, name and other spellings of the name.
    private let index: [String: Int]

    /// A catalogue over the given elements.
    public init(elements: [Element]) {
        self.elements = elements.sorted { $0.number < $1.number }
        var index: [String: Int] = [:]
        for (position, element) in self.elements.enumerated() {
            index[String(element.number)] = position
            index[element.symbol.lowercased()] = position
            index[element.name.lowercased()] = position
            for spelling in element.otherSpellings { index[spelling] = position }
        }
        self.index = index
    }

    /// The element with this atomic number, symbol, name or other spelling of its name (case-insensitive), or nil. O(1).
    public func element(matching identifier: String) -> Element? {
        // Trimming through Foundation is slow enough to show when serving images; most identifiers need none.
        let trimmed = identifier.first?.isWhitespace == true || identifier.last?.isWhitespace == true
            ? identifier.trimmingCharacters(in: .whitespacesAndNewlines) : identifier
        if let number = Int(trimmed) { return element(number: number) }
        return index[trimmed.lowercased()].map { elements[$0] }
    }

    /// The element with this atomic number, or nil.
    public func element(number: Int) -> Element? {
        guard number >= 1, number <= elements.count, elements[number - 1].number == number else {
            return elements.first { $0.number == number }
        }
        return elements[number - 1]
    }
}

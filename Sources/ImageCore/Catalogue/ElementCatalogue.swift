/// The 118 elements, embedded in the package (no network needed), with look-up by number, symbol or name.
///
/// Derived from the seed element API's data set (Periodic-Table-JSON, CC BY-SA 3.0): facts only, element 119 left out.
public struct ElementCatalogue: Sendable {
    /// Atomic numbers from this one up have no full-size photo upstream.
    public static let firstNumberWithoutPhoto = 90

    /// The built-in catalogue.
    public static let standard = ElementCatalogue(elements: builtInElements)

    /// All elements, in atomic-number order.
    public let elements: [Element]

    /// A catalogue over the given elements.
    public init(elements: [Element]) {
        self.elements = elements.sorted { $0.number < $1.number }
    }

    /// The element with this atomic number, symbol or name (case-insensitive), or nil.
    public func element(matching identifier: String) -> Element? {
        let trimmed = identifier.trimmingWhitespace()
        if let number = Int(trimmed) {
            return elements.first { $0.number == number }
        }
        let lowered = trimmed.lowercased()
        return elements.first { $0.symbol.lowercased() == lowered || $0.name.lowercased() == lowered }
    }

    /// The element with this atomic number, or nil.
    public func element(number: Int) -> Element? {
        guard number >= 1, number <= elements.count, elements[number - 1].number == number else {
            return elements.first { $0.number == number }
        }
        return elements[number - 1]
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and line breaks.
    func trimmingWhitespace() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}

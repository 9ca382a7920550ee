public import Catalogue
import Foundation
import ImageCore

/// Which elements a command works on: `1-20,26,Fe,gold` (numbers, ranges, symbols and names, case-insensitive).
public struct ElementSelection: Sendable, Hashable {
    /// The chosen elements, in atomic-number order, each once.
    public var elements: [Element]

    /// Parses `text` against `catalogue`, or explains which item is wrong.
    public init(parsing text: String, catalogue: ElementCatalogue = .standard) throws(InputError) {
        var numbers = Set<Int>()
        let items = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard !items.isEmpty, !items.allSatisfy(\.isEmpty) else {
            throw InputError("--elements is empty: give numbers, ranges, symbols or names, e.g. 1-20,26,Fe,gold")
        }
        for item in items {
            guard !item.isEmpty else { throw InputError("--elements '\(text)' has an empty item (two commas in a row?)") }
            let bounds = item.split(separator: "-", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if bounds.count == 2, let low = Int(bounds[0]), let high = Int(bounds[1]) {
                guard low <= high else { throw InputError("--elements range '\(item)' runs backwards") }
                guard catalogue.element(number: low) != nil, catalogue.element(number: high) != nil else {
                    throw InputError("--elements range '\(item)' is outside 1-\(catalogue.elements.count)")
                }
                numbers.formUnion(low...high)
            } else if let element = catalogue.element(matching: item) {
                numbers.insert(element.number)
            } else {
                throw InputError("--elements: unknown element '\(item)' (use an atomic number 1-\(catalogue.elements.count), a symbol or a name)")
            }
        }
        elements = catalogue.elements.filter { numbers.contains($0.number) }
    }

    /// Every element of `catalogue`.
    public init(all catalogue: ElementCatalogue = .standard) { elements = catalogue.elements }
}

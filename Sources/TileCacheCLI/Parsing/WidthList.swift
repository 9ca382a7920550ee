import ArgumentParser
import Foundation
import ImageCore

/// A comma-separated list of output widths (`--allowed-widths`, `prefetch --sizes`): each 1...`ImageProcessing.maxSide`,
/// in the order given, a repeat kept once.
enum WidthList {
    /// Parses `text`, given as `option`.
    ///
    /// - Throws: `ValidationError` naming the option and the first part that is no width.
    static func parse(_ text: String, option: String) throws -> [Int] {
        var widths: [Int] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false).map({ $0.trimmingCharacters(in: .whitespaces) }) {
            guard let width = Int(part), (1...ImageProcessing.maxSide).contains(width) else {
                throw ValidationError("\(option): '\(part)' is not a width from 1 to \(ImageProcessing.maxSide) (give e.g. 64,128,256)")
            }
            if !widths.contains(width) { widths.append(width) }
        }
        return widths
    }
}

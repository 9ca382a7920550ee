import Foundation
import HTTPTypes
import ImageCore

/// What variants a URL may ask for (issue 31): imgproxy's model of named presets, a presets-only mode, and the
/// allow-lists of widths and qualities that bound the variants of each source.
///
/// The exact rule, in order:
/// 1. `preset=NAME` (or `pr=NAME`) stands for the options the operator gave that name (`--presets`); options in the
///    URL beside it override the preset's, one by one. An unknown name is 400 `unknown-preset`.
/// 2. With `--only-presets`, a URL may carry no option but the preset (and `sig`, and the ignored cache-busters):
///    anything else is 400 `option-not-allowed`. Originals (no options at all) are always served.
/// 3. The URL's own options are checked (a preset's are the operator's, and trusted). With `--allowed-widths` or
///    `--allowed-qualities`, `q` must be in `--allowed-qualities` (none by default: only the default quality; 400
///    `option-not-allowed`). With `--allowed-widths`, `w` x `dpr` must be listed (400 `width-not-allowed`), and `h`,
///    `fit` and `enlarge` are refused (400 `option-not-allowed`). `format` is free.
struct VariantRules: Sendable {
    /// The widths (after `dpr`) variants may have; nil: any.
    var allowedWidths: Set<Int>?
    /// The qualities `q` may name when widths are restricted; empty: only the default quality.
    var allowedQualities: Set<Int> = []
    /// Named option sets: a name to its options, as a query.
    var presets: [String: QueryItems] = [:]
    /// Only presets may be named in URLs.
    var onlyPresets = false

    /// The query names that select a preset (imgproxy's `preset` and its short form).
    static let presetNames: Set<String> = ["preset", "pr"]

    /// The options `query` stands for: its preset's, overridden by its own (the preset's name removed).
    ///
    /// - Throws: `ServiceError` 400 for an unknown preset, a repeated one, or (with `onlyPresets`) another option.
    func expanded(_ query: QueryItems) throws(ServiceError) -> QueryItems {
        let named = query.items.filter { Self.presetNames.contains($0.name) }
        if onlyPresets, let other = query.items.first(where: { ImageOptions.names.contains($0.name) }) {
            throw ServiceError(.badRequest, reason: .optionNotAllowed, message: """
                \(other.name) is not allowed here: this service makes only its presets (preset=\(presetList))
                """)
        }
        guard let chosen = named.first else { return query }
        guard named.count == 1 else { throw ServiceError(.badRequest, reason: .repeatedParameter, message: "give one preset, not \(named.count)") }
        guard let preset = presets[chosen.value] else {
            throw ServiceError(.badRequest, reason: .unknownPreset, message: """
                no preset named '\(chosen.value.prefix(64))' (\(presets.isEmpty ? "this service has none" : "presets: \(presetList)"))
                """)
        }
        let own = query.items.filter { !Self.presetNames.contains($0.name) }
        let overridden = Set(own.map(\.name))
        return QueryItems(items: preset.items.filter { !overridden.contains($0.name) } + own)
    }

    private var presetList: String { presets.keys.sorted().joined(separator: ", ") }

    /// The options `h`, `fit` and `enlarge` (and `q` outside `allowedQualities`) that `--allowed-widths` refuses:
    /// each would make a new variant per value (h=100, h=101, q=17, ...), which is what the list bounds.
    static let optionsNotAllowedWithWidths = ["h", "fit", "enlarge"]

    /// Checks the URL's own options (`query`, before expansion) against the allow-lists, with `width` the width they
    /// ask for after `dpr` (nil when the preset or no option names one).
    ///
    /// - Throws: `ServiceError` 400 `width-not-allowed` or `option-not-allowed`, naming the option and the lists.
    func check(_ query: QueryItems, width: Int?) throws(ServiceError) {
        if let quality = query["q"], allowedWidths != nil || !allowedQualities.isEmpty,
           !allowedQualities.contains(where: { String($0) == quality }) {
            let qualities = allowedQualities.isEmpty ? "only the default quality"
                : "q must be one of \(allowedQualities.sorted().map(String.init).joined(separator: ", "))"
            throw ServiceError(.badRequest, reason: .optionNotAllowed, message: "q is not allowed here (q=\(quality.prefix(16))): \(qualities)")
        }
        guard let allowedWidths else { return }
        // Only for a refusal's message: the accepted requests, the many, do not sort and join the list.
        var list: String { allowedWidths.sorted().map(String.init).joined(separator: ", ") }
        if query["w"] != nil || query["dpr"] != nil, let width, !allowedWidths.contains(width) {
            throw ServiceError(.badRequest, reason: .widthNotAllowed, message: """
                width \(width) is not one this service makes (w x dpr must be one of \(list))
                """)
        }
        if let given = Self.optionsNotAllowedWithWidths.first(where: { query[$0] != nil }) {
            throw ServiceError(.badRequest, reason: .optionNotAllowed, message: """
                \(given) is not allowed here: this service makes only the widths \(list) (w x dpr), in any format
                """)
        }
    }

    /// Reads `--presets`: `NAME:OPTIONS` entries separated by `,`, the options as in a URL's query
    /// (`thumb:w=128&format=webp,card:w=512&q=80`). Each preset's options must be valid together.
    ///
    /// - Throws: `ServiceConfigurationError` naming the entry and what is wrong with it.
    static func presets(parsing text: String) throws(ServiceConfigurationError) -> [String: QueryItems] {
        var presets: [String: QueryItems] = [:]
        for entry in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            let parts = entry.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, parts[0].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
                throw ServiceConfigurationError("--presets: '\(entry)' is not NAME:OPTIONS (a name of letters, digits, - and _, then the options, such as thumb:w=128&format=webp)")
            }
            let options = QueryItems(parts[1])
            guard !options.items.isEmpty else { throw ServiceConfigurationError("--presets: '\(parts[0])' names no options") }
            if let other = options.items.first(where: { !ImageOptions.names.contains($0.name) }) {
                throw ServiceConfigurationError("--presets: '\(parts[0])' has '\(other.name)', not an option (\(ImageOptions.names.sorted().joined(separator: ", ")))")
            }
            do {
                _ = try ImageOptions(options, accept: nil)
            } catch {
                throw ServiceConfigurationError("--presets: '\(parts[0])': \(error.message)")
            }
            guard presets.updateValue(options, forKey: parts[0]) == nil else {
                throw ServiceConfigurationError("--presets: '\(parts[0])' is given twice")
            }
        }
        return presets
    }
}

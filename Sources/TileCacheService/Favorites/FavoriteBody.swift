import Catalogue
import Foundation
import ImageCore
import HTTPTypes

/// A favourite as the seed's mock API kept it: whatever object was posted, checked and completed.
///
/// Two generations of the seed apps post different bodies, and both are accepted: `{favoritedBy, elementName,
/// elementSymbol}` (January 2019) and a whole element record plus `favoritedBy` (December 2019). Every stored body
/// carries `elementName`, `elementSymbol`, `name`, `symbol` and `number` (the ones not posted are added from the
/// catalogue, and `number` is stored as an integer whatever its posted form), so either generation's Favorite model
/// decodes every record.
enum FavoriteBody {
    /// Largest body accepted (413 beyond).
    static let maxBytes = 64 * 1024
    /// Longest `favoritedBy`, in Unicode scalars: a limit on grapheme clusters would let one "character" carry
    /// thousands of combining marks.
    static let maxNameLength = 100
    /// Keys the server sets, whatever was posted.
    static let serverKeys: Set<String> = ["id", "createdAt"]
    /// Fields a favourite can be listed by even when no stored record has them: the server's, the January 2019 body's
    /// and an element record's.
    static let knownFields = serverKeys.union(["favoritedBy", "elementName", "elementSymbol"]).union(ElementRecord.seedKeys)

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A posted body, checked and completed: the object to store, who it belongs to and the element it names.
    struct Checked {
        var object: [String: JSONValue]
        var favoritedBy: String
        var element: Element

        /// The object as stored (JSON text).
        var text: String { String(decoding: (try? FavoriteBody.encoder.encode(object)) ?? Data("{}".utf8), as: UTF8.self) }
    }

    /// Parses and checks a request body.
    ///
    /// - Throws: `ServiceError` 400 when it is not a JSON object, `favoritedBy` is missing, blank or too long, no element
    ///   is named or a naming key has the wrong type; 422 when the element is unknown or the keys name different ones.
    static func check(_ bytes: Data, catalogue: ElementCatalogue) throws(ServiceError) -> Checked {
        let parsed: JSONValue
        do {
            parsed = try JSONDecoder().decode(JSONValue.self, from: bytes)
        } catch {
            throw ServiceError(.badRequest, reason: .badJSON, message: "the body is not valid JSON: \(Self.describe(error, bytes))")
        }
        guard case .object(var object) = parsed else {
            throw ServiceError(.badRequest, reason: .badJSON, message: "the body must be a JSON object with favoritedBy and the element's name or symbol")
        }
        for key in serverKeys { object[key] = nil }
        guard case .string(let rawPerson)? = object["favoritedBy"] else {
            throw ServiceError(.badRequest, reason: .missingField, message: "favoritedBy is required (a non-empty string)")
        }
        // Composed (NFC): "é" typed as one character or as "e" and a combining accent is one person.
        let person = rawPerson.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
        guard !person.isEmpty else {
            throw ServiceError(.badRequest, reason: .missingField, message: "favoritedBy is required (a non-empty string)")
        }
        guard person.unicodeScalars.count <= maxNameLength else {
            throw ServiceError(.badRequest, reason: .fieldTooLong,
                               message: "favoritedBy is longer than \(maxNameLength) characters (Unicode scalars: combining marks count)")
        }
        if let (position, scalar) = Self.firstUnsafeScalar(in: person) {
            throw ServiceError(.badRequest, reason: .badField,
                               message: "favoritedBy may not hold control, format or invisible characters such as bidirectional overrides or zero-width spaces (U+\(String(format: "%04X", scalar.value)) at position \(position))")
        }
        object["favoritedBy"] = .string(person)
        let element = try namedElement(object, catalogue: catalogue)
        let completion: [(String, JSONValue)] = [
            ("elementName", .string(element.name)), ("elementSymbol", .string(element.symbol)), ("name", .string(element.name)),
            ("symbol", .string(element.symbol)), ("number", .integer(Int64(element.number))),
        ]
        for (key, value) in completion where object[key] == nil || object[key] == .null { object[key] = value }
        object["number"] = .integer(Int64(element.number))  // `"11"` or `11.0` as posted would not decode as an Int
        return Checked(object: object, favoritedBy: person, element: element)
    }

    /// The one element the naming keys (`elementName`, `elementSymbol`, `name`, `symbol`, `number`) agree on.
    private static func namedElement(_ object: [String: JSONValue], catalogue: ElementCatalogue) throws(ServiceError) -> Element {
        var found: [(key: String, given: String, element: Element)] = []
        for key in ["elementName", "elementSymbol", "name", "symbol", "number"] {
            guard let value = object[key], value != .null else { continue }
            let given: String
            let element: Element?
            if key == "number" {
                guard let number = value.wholeNumber else {
                    throw ServiceError(.badRequest, reason: .badField, message: "number must be a whole number")
                }
                given = String(number)
                element = Int(exactly: number).flatMap(catalogue.element(number:))
            } else {
                guard let text = value.string?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty, text.unicodeScalars.count <= 64 else {
                    throw ServiceError(.badRequest, reason: .badField, message: "\(key) must be a non-empty string of at most 64 characters")
                }
                given = text
                // The catalogue's index reads numbers, symbols and names alike: keep the answers of the kind asked for.
                let matched = catalogue.element(matching: text)
                element = key.lowercased().hasSuffix("symbol")
                    ? matched.flatMap { $0.symbol.lowercased() == text.lowercased() ? $0 : nil }
                    : matched.flatMap { Int(text) == nil ? $0 : nil }
            }
            guard let element else {
                throw ServiceError(.unprocessableContent, reason: .unknownElement, message: "\(key) '\(given)' names no element")
            }
            found.append((key, given, element))
        }
        guard let first = found.first else {
            throw ServiceError(.badRequest, reason: .missingField,
                               message: "name the element: elementName and elementSymbol, or name, symbol or number")
        }
        if let other = found.first(where: { $0.element.number != first.element.number }) {
            throw ServiceError(.unprocessableContent, reason: .elementMismatch,
                               message: "\(first.key) '\(first.given)' is \(first.element.name) but \(other.key) '\(other.given)' is \(other.element.name)")
        }
        return first.element
    }

    /// The API's view of a stored favourite: the stored object plus `id` (a string) and `createdAt`.
    static func record(_ favorite: Favorite) -> [String: JSONValue] {
        var object: [String: JSONValue] = [:]
        if case .object(let stored)? = try? JSONDecoder().decode(JSONValue.self, from: Data(favorite.body.utf8)) { object = stored }
        object["id"] = .string(favorite.id.map(String.init) ?? "")
        object["createdAt"] = .string(favorite.createdAt)
        return object
    }

    /// Characters that make a name display as something else, or as nothing: controls (C0, DEL, C1: NUL among them),
    /// format characters (the bidirectional embeddings, overrides, isolates and marks, zero-width spaces and joiners,
    /// U+FEFF, tag characters), line and paragraph separators, surrogates, private-use and unassigned code points,
    /// and the Hangul fillers, which are letters that draw nothing. "Ada" and "Ada" + U+200B looked the same and were
    /// two people for filters and quotas.
    /// The zero-width joiner is allowed between two emoji, where it draws one (a family, a profession).
    static func firstUnsafeScalar(in name: String) -> (position: Int, scalar: Unicode.Scalar)? {
        let scalars = Array(name.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            let unsafe: Bool
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .privateUse, .unassigned:
                let joinsEmoji = scalar.value == 0x200D && index > 0 && index + 1 < scalars.count
                    && scalars[index - 1...index + 1].allSatisfy { $0 == scalar || ($0.value > 0xFF && $0.properties.isEmoji) || $0.value == 0xFE0F }
                unsafe = !joinsEmoji
            default:
                unsafe = [0x115F, 0x1160, 0x3164, 0xFFA0].contains(scalar.value)
            }
            if unsafe { return (index + 1, scalar) }
        }
        return nil
    }

    /// Why the body is not JSON, in the parser's words (where it stopped, and why); never a Swift type name.
    private static func describe(_ error: any Error, _ bytes: Data) -> String {
        guard String(validating: bytes, as: UTF8.self) != nil else { return "it is not UTF-8 text" }
        if case DecodingError.dataCorrupted(let context) = error, let underlying = context.underlyingError as NSError?,
           let said = underlying.userInfo[NSDebugDescriptionErrorKey] as? String {
            return said
        }
        // Foundation's decoder says only that the data is not valid JSON; its parser says where and why.
        do {
            _ = try JSONSerialization.jsonObject(with: bytes, options: [.fragmentsAllowed])
        } catch {
            if let said = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String {
                return said.replacingOccurrences(of: " in Swift", with: " in 64 bits")
            }
        }
        return "it is not a JSON document"
    }
}

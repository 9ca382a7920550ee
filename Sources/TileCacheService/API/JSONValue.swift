import Foundation

/// Any JSON value: what the favourites API stores as posted, and what list queries filter and sort.
///
/// Integers stay integers (`Int64`) so ids and counts round-trip exactly; other numbers are `Double`.
enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The string, or nil for other kinds.
    var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The value as a whole number: an integer, an integral number, or a string of digits; else nil.
    var wholeNumber: Int64? {
        switch self {
        case .integer(let value): return value
        case .number(let value) where value.rounded() == value && abs(value) < 9e15: return Int64(value)
        case .string(let text): return Int64(text.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

    /// The number as a Double, for integers and numbers; else nil.
    var double: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .number(let value): return value
        default: return nil
        }
    }

    /// A string, or `null` for nil.
    static func nullable(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    /// A number, or `null` for nil.
    static func nullable(_ value: Double?) -> JSONValue { value.map(JSONValue.number) ?? .null }
}

/// Any JSON value, for the few tests that check a shape rather than fields: which keys an object has, that a key is
/// present with `null`, or that two answers are the same JSON.
///
/// Numbers are `Double`, as JSON has them; a test that reads a typed field decodes a model instead.
public enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
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

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value of `key` when this is an object that has it (`.null` when it is present with `null`), else nil.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    /// The text of a string, nil for anything else.
    public var string: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }

    /// The elements of an array, nil for anything else.
    public var array: [JSONValue]? {
        guard case .array(let elements) = self else { return nil }
        return elements
    }

    /// The keys of an object, nil for anything else.
    public var keys: Set<String>? {
        guard case .object(let object) = self else { return nil }
        return Set(object.keys)
    }
}

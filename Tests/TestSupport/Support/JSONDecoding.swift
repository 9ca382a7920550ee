public import Foundation

/// Decodes JSON `data` as `type`, as a client of the documented output would: `JSONDecoder` with its default strategies.
///
/// - Throws: `TestFailure` naming the type, the key path and reason of the mismatch, and the text (its first 2,000
///   characters), so a renamed or retyped field says which one.
public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
    do {
        return try JSONDecoder().decode(type, from: data)
    } catch {
        let text = String(decoding: data, as: UTF8.self)
        let shown = text.count > 2_000 ? text.prefix(2_000) + "…" : Substring(text)
        throw TestFailure("the JSON is not a \(String(describing: type)): \(describe(error))\n\(shown)")
    }
}

/// Decodes the JSON `text` as `type` (see `decode(_:from:)` for data).
public func decode<T: Decodable>(_ type: T.Type, from text: some StringProtocol) throws -> T {
    try decode(type, from: Data(text.utf8))
}

/// Decodes the JSON `bytes` as `type` (see `decode(_:from:)` for data).
public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
    try decode(type, from: Data(bytes))
}

/// A decoding error in words: what was wrong, and where (`runs[1].hitRate`).
private func describe(_ error: any Error) -> String {
    func path(_ keys: [any CodingKey]) -> String {
        let text = keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        return text.isEmpty ? "the top level" : String(text.drop { $0 == "." })
    }
    switch error as? DecodingError {
    case .keyNotFound(let key, let context)?:
        return "no key '\(key.stringValue)' at \(path(context.codingPath))"
    case .valueNotFound(_, let context)?:
        return "null at \(path(context.codingPath)): \(context.debugDescription)"
    case .typeMismatch(_, let context)?:
        return "wrong type at \(path(context.codingPath)): \(context.debugDescription)"
    case .dataCorrupted(let context)?:
        return "not valid JSON at \(path(context.codingPath)): \(context.debugDescription)"
    default:
        return "\(error)"
    }
}

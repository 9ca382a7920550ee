/// The string values of a JSON document with their lines and their paths from the root: Foundation's
/// `JSONSerialization` gives neither, so this small scanner walks the (already validated) text once.
struct JSONStringScanner {
    /// A string value met.
    struct Value {
        /// The decoded string.
        var text: String
        /// Its 1-based line.
        var line: Int
        /// Where it is: object keys and array elements from the root.
        var location: [JSONPath.Step]
    }

    private let bytes: [UInt8]
    private var position = 0
    private var line = 1
    private var location: [JSONPath.Step] = []
    private var found: [Value] = []

    /// A scanner of `bytes`, which `JSONSerialization` has accepted.
    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    /// Every string value (not object keys), in document order.
    mutating func values() -> [Value] {
        skipWhiteSpace()
        scanValue()
        return found
    }

    private mutating func skipWhiteSpace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) {
            if bytes[position] == 0x0A { line += 1 }
            position += 1
        }
    }

    private mutating func scanValue() {
        guard position < bytes.count else { return }
        switch bytes[position] {
        case UInt8(ascii: "{"):
            position += 1
            skipWhiteSpace()
            while position < bytes.count, bytes[position] != UInt8(ascii: "}") {
                let key = readString()
                skipWhiteSpace()
                position += 1  // ':'
                skipWhiteSpace()
                location.append(.key(key))
                scanValue()
                location.removeLast()
                skipWhiteSpace()
                if position < bytes.count, bytes[position] == UInt8(ascii: ",") { position += 1; skipWhiteSpace() }
            }
            position += 1
        case UInt8(ascii: "["):
            position += 1
            skipWhiteSpace()
            location.append(.eachElement)
            while position < bytes.count, bytes[position] != UInt8(ascii: "]") {
                scanValue()
                skipWhiteSpace()
                if position < bytes.count, bytes[position] == UInt8(ascii: ",") { position += 1; skipWhiteSpace() }
            }
            location.removeLast()
            position += 1
        case UInt8(ascii: "\""):
            let start = line
            let text = readString()
            found.append(Value(text: text, line: start, location: location))
        default:
            // A number, true, false or null.
            while position < bytes.count, !",]} \t\r\n".utf8.contains(bytes[position]) { position += 1 }
        }
    }

    /// Reads the string at `position` (escapes decoded, surrogate pairs joined).
    private mutating func readString() -> String {
        position += 1
        var scalars = String.UnicodeScalarView()
        var raw: [UInt8] = []
        func flush() {
            scalars.append(contentsOf: String(decoding: raw, as: UTF8.self).unicodeScalars)
            raw.removeAll()
        }
        while position < bytes.count, bytes[position] != UInt8(ascii: "\"") {
            guard bytes[position] == UInt8(ascii: "\\"), position + 1 < bytes.count else {
                raw.append(bytes[position])
                position += 1
                continue
            }
            flush()
            let escaped = bytes[position + 1]
            position += 2
            switch escaped {
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "u"):
                var code = readHex4()
                if (0xD800..<0xDC00).contains(code), position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                   bytes[position + 1] == UInt8(ascii: "u") {
                    position += 2
                    let low = readHex4()
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
            default: scalars.append(Unicode.Scalar(escaped))  // \" \\ \/
            }
        }
        flush()
        position += 1
        return String(scalars)
    }

    private mutating func readHex4() -> UInt32 {
        guard position + 4 <= bytes.count else { return 0xFFFD }
        let digits = String(decoding: bytes[position..<position + 4], as: UTF8.self)
        position += 4
        return UInt32(digits, radix: 16) ?? 0xFFFD
    }
}

/// A size in bytes written the way people write it: `10MiB`, `512KB`, `1.5GB`, `4096`.
///
/// Binary units (`KiB`, `MiB`, `GiB`) are powers of 1024; decimal units (`KB`, `MB`, `GB`) powers of 1000;
/// `K`, `M`, `G` alone mean the binary ones. Case is ignored; a space before the unit is allowed.
public struct ByteSize: Sendable, Hashable, CustomStringConvertible {
    /// The number of bytes.
    public var bytes: Int

    /// Parses `text`, or explains what is wrong with it.
    public init(parsing text: String) throws(InputError) {
        let trimmed = text.filter { !$0.isWhitespace }
        let numberPart = trimmed.prefix { $0.isNumber || $0 == "." }
        let unit = trimmed.dropFirst(numberPart.count).lowercased()
        guard !numberPart.isEmpty, let number = Double(numberPart), number >= 0 else {
            throw InputError("'\(text)' is not a size: expected a number with an optional unit, e.g. 10MiB, 512KB, 4096")
        }
        let multipliers: [String: Double] = [
            "": 1, "b": 1,
            "k": 1024, "kib": 1024, "kb": 1000,
            "m": 1024 * 1024, "mib": 1024 * 1024, "mb": 1_000_000,
            "g": 1024 * 1024 * 1024, "gib": 1024 * 1024 * 1024, "gb": 1_000_000_000,
        ]
        guard let multiplier = multipliers[unit] else {
            throw InputError("'\(text)' has an unknown unit '\(unit)': use B, KB, KiB, MB, MiB, GB or GiB")
        }
        let value = number * multiplier
        guard value <= Double(Int.max / 2) else { throw InputError("'\(text)' is too large") }
        bytes = Int(value.rounded())
    }

    /// A size of `bytes`.
    public init(bytes: Int) { self.bytes = bytes }

    /// The size in the largest binary unit that keeps a whole or one-decimal number: `10 MiB`, `1.5 KiB`, `512 B`.
    public var description: String { Self.format(bytes) }

    /// Formats a byte count for people.
    public static func format(_ bytes: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes), unit = 0
        while value >= 1024, unit < units.count - 1 { value /= 1024; unit += 1 }
        if unit == 0 { return "\(bytes) B" }
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? "\(Int(rounded)) \(units[unit])" : "\(rounded) \(units[unit])"
    }
}

extension Array where Element == UInt8 {
    /// Whether the bytes at `offset` are `pattern` (lowercase ASCII), ignoring the case of ASCII letters: how the
    /// scanners match tag names, `url(` and at-rules.
    func matchesLowercased(_ pattern: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, offset + pattern.count <= count else { return false }
        for (index, expected) in pattern.enumerated() {
            var actual = self[offset + index]
            if actual >= UInt8(ascii: "A"), actual <= UInt8(ascii: "Z") { actual += 32 }
            if actual != expected { return false }
        }
        return true
    }
}

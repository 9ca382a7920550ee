/// Comparisons of secrets (signatures, token digests) whose time does not depend on where they first differ.
enum ConstantTime {
    /// Whether `a` and `b` are the same bytes: every byte pair is compared whatever the first difference; a length
    /// difference is no match.
    static func equal(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        var difference: UInt8 = a.count == b.count ? 0 : 1
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}

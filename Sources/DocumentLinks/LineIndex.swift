/// Lines of a text, for turning a byte offset into a 1-based line: a line ends at LF, CRLF or a lone CR.
struct LineIndex {
    /// The byte offset where each line starts.
    private var starts: [Int] = [0]

    /// The index of `bytes`.
    init(_ bytes: some Collection<UInt8>) {
        var previous: UInt8 = 0
        for (offset, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: "\n") {
                starts.append(offset + 1)
            } else if previous == UInt8(ascii: "\r") {
                starts.append(offset)
            }
            previous = byte
        }
        if previous == UInt8(ascii: "\r") { starts.append(bytes.count) }
    }

    /// The 1-based line of the byte at `offset`.
    func line(ofOffset offset: Int) -> Int {
        var low = 0, high = starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        return low + 1
    }
}

/// The marker segments of a well-formed JPEG, for tools that rewrite one (the origin's quirks, declared sizes).
///
/// Not a validator: it walks segments by their length fields and gives up (returns what it found) at anything else.
enum JPEGSegments {
    /// One marker segment: `FF marker`, a two-byte length (which counts itself), then the segment's data.
    struct Segment {
        /// The marker code (0xDB for DQT, 0xC4 for DHT, 0xE0...0xEF for APPn, ...).
        var marker: UInt8
        /// Offset of the segment's 0xFF.
        var offset: Int
        /// The length field's value: the data's size plus 2.
        var length: Int
        /// Offset just past the segment.
        var end: Int { offset + 2 + length }
    }

    /// The segments after SOI, up to and including the first SOS (start of scan).
    static func header(of bytes: [UInt8]) -> [Segment] {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return [] }
        var segments: [Segment] = []
        var offset = 2
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let segment = Segment(marker: bytes[offset + 1], offset: offset,
                                  length: Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]))
            segments.append(segment)
            if segment.marker == 0xDA || segment.end > bytes.count { break }
            offset = segment.end
        }
        return segments
    }

    /// The bytes from the first scan's entropy-coded data to just before the final EOI marker (later scans' headers
    /// of a progressive JPEG included), or nil without a scan.
    static func scanData(of bytes: [UInt8]) -> Range<Int>? {
        guard let scan = header(of: bytes).last, scan.marker == 0xDA else { return nil }
        let end = bytes.suffix(2) == [0xFF, 0xD9] ? bytes.count - 2 : bytes.count
        return scan.end < end ? scan.end..<end : nil
    }
}

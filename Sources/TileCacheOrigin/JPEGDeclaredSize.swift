/// Rewrites the size a JPEG's frame header (SOF0/SOF2) declares, leaving the image data as it is: how the origin
/// and the tests make "header claims 65500x65500" fixtures.
public enum JPEGDeclaredSize {
    /// `bytes` with the first SOF marker's height and width replaced; nil when there is no SOF0/SOF2 marker.
    public static func claiming(width: Int, height: Int, in bytes: [UInt8]) -> [UInt8]? {
        guard let frame = JPEGSegments.header(of: bytes).first(where: { $0.marker == 0xC0 || $0.marker == 0xC2 }),
              frame.offset + 9 <= bytes.count else { return nil }
        var bytes = bytes
        let index = frame.offset
        bytes[index + 5] = UInt8(height >> 8 & 0xFF); bytes[index + 6] = UInt8(height & 0xFF)
        bytes[index + 7] = UInt8(width >> 8 & 0xFF); bytes[index + 8] = UInt8(width & 0xFF)
        return bytes
    }
}

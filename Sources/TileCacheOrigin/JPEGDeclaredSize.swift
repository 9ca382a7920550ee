/// Rewrites the size a JPEG's frame header (SOF0/SOF2) declares, leaving the image data as it is: how the origin
/// and the tests make "header claims 65500x65500" fixtures.
public enum JPEGDeclaredSize {
    /// `bytes` with the first SOF marker's height and width replaced; nil when there is no SOF0/SOF2 marker.
    public static func claiming(width: Int, height: Int, in bytes: [UInt8]) -> [UInt8]? {
        var bytes = bytes
        var index = 2
        while index + 9 < bytes.count {
            guard bytes[index] == 0xFF else { index += 1; continue }
            let marker = bytes[index + 1]
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            if marker == 0xC0 || marker == 0xC2 {
                bytes[index + 5] = UInt8(height >> 8 & 0xFF); bytes[index + 6] = UInt8(height & 0xFF)
                bytes[index + 7] = UInt8(width >> 8 & 0xFF); bytes[index + 8] = UInt8(width & 0xFF)
                return bytes
            }
            index += 2 + length
        }
        return nil
    }
}

/// The TIFF structure of a JPEG's EXIF block (APP1 "Exif\0\0"), checked only as far as a reader needs to trust it.
///
/// libjpeg skips APP1 without looking; readers that use EXIF (orientation, camera data) fail on a damaged one, and
/// libvips warns and ignores it. ImageCore does the same: a damaged block is a warning, never a failure.
enum EXIFBlock {
    /// Why the TIFF data after "Exif\0\0" cannot be read, or nil when its header and first directory are sound.
    static func problem(in tiff: UnsafeRawBufferPointer) -> String? {
        guard tiff.count >= 8 else { return "the block is \(tiff.count) bytes, too short for a TIFF header" }
        let bigEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): bigEndian = false  // "II"
        case (0x4D, 0x4D): bigEndian = true   // "MM"
        default: return "the TIFF header does not start with II or MM"
        }
        func read(_ offset: Int, _ count: Int) -> Int {
            (0..<count).reduce(0) { value, index in
                value | Int(tiff[offset + index]) << (8 * (bigEndian ? count - 1 - index : index))
            }
        }
        guard read(2, 2) == 42 else { return "the TIFF header's magic number is \(read(2, 2)), not 42" }
        let directory = read(4, 4)
        guard directory >= 8, directory + 2 <= tiff.count else {
            return "the first directory's offset \(directory) lies outside the \(tiff.count)-byte block"
        }
        let entries = read(directory, 2)
        guard directory + 2 + entries * 12 <= tiff.count else {
            return "the first directory's \(entries) entries run past the end of the block"
        }
        return nil
    }

    /// The Orientation tag (0x0112) of the first directory, 1...8, or nil when the block is damaged, has none, or
    /// holds a value outside 1...8 (which readers treat as 1).
    static func orientation(in tiff: UnsafeRawBufferPointer) -> Int? {
        guard problem(in: tiff) == nil else { return nil }
        let bigEndian = tiff[0] == 0x4D
        func read(_ offset: Int, _ count: Int) -> Int {
            (0..<count).reduce(0) { value, index in
                value | Int(tiff[offset + index]) << (8 * (bigEndian ? count - 1 - index : index))
            }
        }
        let directory = read(4, 4)
        for entry in 0..<read(directory, 2) {
            let offset = directory + 2 + entry * 12
            // Tag, type SHORT (3), count 1: the value sits in the first two bytes of the value field.
            guard read(offset, 2) == 0x0112 else { continue }
            guard read(offset + 2, 2) == 3, read(offset + 4, 4) >= 1 else { return nil }
            let value = read(offset + 8, 2)
            return (1...8).contains(value) ? value : nil
        }
        return nil
    }
}

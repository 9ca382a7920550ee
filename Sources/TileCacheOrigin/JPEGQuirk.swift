/// Quirks and damage seen in real JPEGs, made from any well-formed one: the inputs a validator must judge by their
/// bytes alone. The origin serves some of them (`BodyForm`); the tests apply all of them to real camera photos.
///
/// `expected` is what TileCache's strict validation must say, and why (docs/architecture.md, "Validation rule"):
/// Pillow, libvips and browsers open every `valid` and `validWithWarning` file; the rest are damaged.
public struct JPEGQuirk: Sendable, Hashable, CustomStringConvertible {
    /// The strict verdict a quirk leads to.
    public enum Verdict: String, Sendable, Hashable {
        /// Valid, no warning (the standard allows it).
        case valid
        /// Valid, with a warning naming the quirk.
        case validWithWarning = "valid-with-warning"
        /// `truncated`: the data ends early.
        case truncated
        /// `corrupt`: the data is damaged.
        case corrupt
    }

    enum Change: Hashable {
        case junkBefore(marker: UInt8)
        case junkBeforeLaterAPP
        case shortAPPLength(by: Int)
        case damagedEXIF
        case fillBytesBefore(marker: UInt8)
        case bogusDHTLength
        case cutInDHT
        case cutAt(percent: Int)
        case missingEOI
        case flippedScanBytes(atPercent: Int, count: Int)
    }

    /// A short name, e.g. `junk-before-dqt`.
    public let name: String
    /// What strict validation must say.
    public let expected: Verdict
    let change: Change

    public var description: String { name }

    /// Every quirk.
    public static let all: [JPEGQuirk] = [
        JPEGQuirk(name: "junk-before-dqt", expected: .validWithWarning, change: .junkBefore(marker: 0xDB)),
        JPEGQuirk(name: "junk-before-app", expected: .validWithWarning, change: .junkBeforeLaterAPP),
        JPEGQuirk(name: "app-length-3-short", expected: .validWithWarning, change: .shortAPPLength(by: 3)),
        JPEGQuirk(name: "exif-damaged-tiff-header", expected: .validWithWarning, change: .damagedEXIF),
        JPEGQuirk(name: "fill-bytes-before-dqt", expected: .valid, change: .fillBytesBefore(marker: 0xDB)),
        JPEGQuirk(name: "bogus-dht-length", expected: .corrupt, change: .bogusDHTLength),
        JPEGQuirk(name: "cut-in-dht", expected: .truncated, change: .cutInDHT),
        JPEGQuirk(name: "cut-at-25-percent", expected: .truncated, change: .cutAt(percent: 25)),
        JPEGQuirk(name: "cut-at-50-percent", expected: .truncated, change: .cutAt(percent: 50)),
        JPEGQuirk(name: "cut-at-90-percent", expected: .truncated, change: .cutAt(percent: 90)),
        JPEGQuirk(name: "missing-eoi", expected: .truncated, change: .missingEOI),
        // JPEG has no checksum: damage is found only where the decoder desynchronises (a bad Huffman code, a scan that
        // ends before or after its data does). Of 35 runs of 64 inverted bytes at 20...80% into the 5 test photos'
        // scans, 29 are found; the other 6 decode to wrong pixels that djpeg, Pillow and libvips accept as well.
        // These two places are found in every test photo (docs/reliability.md has the rates).
        JPEGQuirk(name: "flipped-scan-bytes-at-50-percent", expected: .corrupt, change: .flippedScanBytes(atPercent: 50, count: 64)),
        JPEGQuirk(name: "flipped-scan-bytes-at-60-percent", expected: .corrupt, change: .flippedScanBytes(atPercent: 60, count: 64)),
    ]

    /// The quirk called `name`.
    public static func named(_ name: String) -> JPEGQuirk? { all.first { $0.name == name } }

    /// `jpeg` with this quirk, or nil when the JPEG lacks what the quirk changes (no DQT, no second APPn segment, no
    /// scan, ...).
    public func apply(to jpeg: [UInt8]) -> [UInt8]? {
        let segments = JPEGSegments.header(of: jpeg)
        guard let scan = JPEGSegments.scanData(of: jpeg) else { return nil }
        let junk: [UInt8] = [0x00, 0x11, 0x22, 0x33]
        var bytes = jpeg
        switch change {
        case .junkBefore(let marker):
            guard let segment = segments.first(where: { $0.marker == marker }) else { return nil }
            bytes.insert(contentsOf: junk, at: segment.offset)
        case .junkBeforeLaterAPP:
            // Not before the first segment: junk right after SOI breaks the FF D8 FF signature every reader sniffs.
            guard let app = segments.dropFirst().first(where: { (0xE0...0xEF).contains($0.marker) }) else { return nil }
            bytes.insert(contentsOf: junk, at: app.offset)
        case .shortAPPLength(let shortBy):
            guard let app = segments.first(where: { (0xE0...0xEF).contains($0.marker) && $0.length > shortBy + 2 }) else { return nil }
            let length = app.length - shortBy
            bytes[app.offset + 2] = UInt8(length >> 8)
            bytes[app.offset + 3] = UInt8(length & 0xFF)
        case .damagedEXIF:
            let exifStart = Array("Exif".utf8) + [0, 0]
            if let app1 = segments.first(where: { $0.marker == 0xE1 && Array(bytes[(app1Data($0))..<min(bytes.count, app1Data($0) + 6)]) == exifStart }) {
                bytes[app1Data(app1) + 6] = UInt8(ascii: "X")
                bytes[app1Data(app1) + 7] = UInt8(ascii: "X")
            } else {
                // An APP1 EXIF block whose TIFF header reads "XX" where "II" or "MM" belongs, after the first segment.
                let tiff: [UInt8] = Array("XX".utf8) + [0x2A, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]
                let data = exifStart + tiff
                let segment: [UInt8] = [0xFF, 0xE1, UInt8((data.count + 2) >> 8), UInt8((data.count + 2) & 0xFF)] + data
                bytes.insert(contentsOf: segment, at: segments.first?.end ?? 2)
            }
        case .fillBytesBefore(let marker):
            guard let segment = segments.first(where: { $0.marker == marker }) else { return nil }
            bytes.insert(contentsOf: [0xFF, 0xFF, 0xFF], at: segment.offset)
        case .bogusDHTLength:
            guard let dht = segments.first(where: { $0.marker == 0xC4 }) else { return nil }
            bytes[dht.offset + 2] = 0x00
            bytes[dht.offset + 3] = 0x01
        case .cutInDHT:
            guard let dht = segments.first(where: { $0.marker == 0xC4 }) else { return nil }
            bytes = Array(bytes[..<(dht.offset + 2 + dht.length / 2)])
        case .cutAt(let percent):
            bytes = Array(bytes[..<max(3, bytes.count * percent / 100)])
        case .missingEOI:
            guard bytes.suffix(2) == [0xFF, 0xD9] else { return nil }
            bytes.removeLast(2)
        case .flippedScanBytes(let percent, let count):
            // Inverts `count` data bytes, leaving 0xFF bytes and the byte after each (markers, stuffing) alone, and
            // never making a new 0xFF: the damage is to the entropy-coded data, not to the marker structure.
            var index = scan.lowerBound + (scan.count * percent / 100)
            var flipped = 0
            while flipped < count, index < scan.upperBound {
                if bytes[index] != 0xFF, bytes[index - 1] != 0xFF {
                    let inverted = bytes[index] ^ 0xFF
                    bytes[index] = inverted == 0xFF ? 0x7F : inverted
                    flipped += 1
                }
                index += 1
            }
            guard flipped == count else { return nil }
        }
        return bytes
    }

    /// Offset of an APP1 segment's data (after marker and length).
    private func app1Data(_ segment: JPEGSegments.Segment) -> Int { segment.offset + 4 }
}

public import Catalogue
public import ImageCore

/// Generates the origin's element images: deterministic for a seed, with enough texture that JPEG sizes look like
/// the real hosts' (thumbnails about 100-250 px and a few KB; photos 500-1000 px wide and tens of KB).
///
/// Thread-safety: a value type; `render` is pure.
public struct ImageSynthesizer: Sendable {
    /// Changes every image (and so every ETag) when changed.
    public var seed: UInt64
    /// JPEG quality of the generated images.
    public var quality: Int

    /// A synthesizer with the given seed.
    public init(seed: UInt64 = 1, quality: Int = 85) {
        self.seed = seed
        self.quality = quality
    }

    /// Pixel size of an element's image of `kind`.
    public func size(of element: Element, kind: ImageKind) -> (width: Int, height: Int) {
        var random = SplitMix64(seed: seed ^ UInt64(element.number) &* 0x9E37_79B9 ^ (kind == .full ? 0xF011 : 0x7111))
        switch kind {
        case .thumbnail:
            let side = 100 + Int(random.next() % 151)  // 100...250, square like the real tiles
            return (side, side)
        case .full:
            let width = 500 + Int(random.next() % 501)  // 500...1000
            let height = width * (60 + Int(random.next() % 21)) / 100  // 0.6...0.8 of the width
            return (width, height)
        }
    }

    /// The decoded pixels of an element's image of `kind` (RGB).
    public func render(_ element: Element, kind: ImageKind) -> DecodedImage {
        let (width, height) = size(of: element, kind: kind)
        var random = SplitMix64(seed: seed &+ UInt64(element.number) &* 0x2545_F491_4F6C_DD1D &+ (kind == .full ? 1 : 0))
        let base = (Int(random.next() % 200) + 30, Int(random.next() % 200) + 30, Int(random.next() % 200) + 30)
        let accent = (Int(random.next() % 256), Int(random.next() % 256), Int(random.next() % 256))
        let blobs = (0..<(kind == .full ? 7 : 3)).map { _ in
            (x: Int(random.next() % UInt64(width)), y: Int(random.next() % UInt64(height)),
             r: Int(random.next() % UInt64(max(8, min(width, height) / 3))) + 6)
        }
        var noise = random.next() | 1
        // The blobs as (x, y, r²) triples. The loops below are written for the debug build too, in which every check of
        // `make test` runs its origins: `while` over Ints, raw pointers and a hand-written clamp compile to plain
        // instructions at -Onone, where ranges, arrays of tuples and `UInt8(clamping:)` are generic calls at every
        // pixel. A debug origin spent 38-40 s of CPU on one seed's 207 images, 90% of it in those calls; it spends 7 s
        // now, on the same pixels.
        var circles = [Int](repeating: 0, count: blobs.count * 3)
        for (index, blob) in blobs.enumerated() {
            circles[3 * index] = blob.x
            circles[3 * index + 1] = blob.y
            circles[3 * index + 2] = blob.r * blob.r
        }
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        pixels.withUnsafeMutableBufferPointer { pixelBuffer in
            circles.withUnsafeBufferPointer { circleBuffer in
                guard let out = pixelBuffer.baseAddress, let circle = circleBuffer.baseAddress else { return }
                let circleEnd = circleBuffer.count
                var offset = 0
                var y = 0
                while y < height {
                    let shade = 255 - y * 160 / height
                    var x = 0
                    while x < width {
                        noise ^= noise << 13; noise ^= noise >> 7; noise ^= noise << 17
                        let grain = Int(noise & 31) - 16
                        var (r, g, b) = (base.0 * shade / 255, base.1 * shade / 255, (base.2 + x * 60 / width) * shade / 255)
                        var index = 0
                        while index < circleEnd {
                            let dx = x - circle[index], dy = y - circle[index + 1]
                            if dx * dx + dy * dy < circle[index + 2] {
                                r = (r + accent.0) / 2; g = (g + accent.1) / 2; b = (b + accent.2) / 2
                            }
                            index += 3
                        }
                        out[offset] = Self.byte(r + grain)
                        out[offset + 1] = Self.byte(g + grain)
                        out[offset + 2] = Self.byte(b + grain)
                        offset += 3
                        x += 1
                    }
                    y += 1
                }
            }
        }
        return DecodedImage(width: width, height: height, pixelFormat: .rgb, pixels: pixels)
    }

    /// `value` clamped to 0...255: `UInt8(clamping:)` without its generic call in a debug build.
    private static func byte(_ value: Int) -> UInt8 {
        value < 0 ? 0 : value > 255 ? 255 : UInt8(truncatingIfNeeded: value)
    }

    /// The JPEG bytes of an element's image of `kind`.
    public func jpeg(_ element: Element, kind: ImageKind) -> [UInt8] {
        // Encoding generated RGB pixels of a valid size cannot fail short of running out of memory.
        do {
            return try JPEGEncoder.encode(render(element, kind: kind), quality: quality)
        } catch {
            fatalError("encoding a generated image failed: \(error)")
        }
    }
}

/// A small, fast, deterministic random number generator (SplitMix64).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

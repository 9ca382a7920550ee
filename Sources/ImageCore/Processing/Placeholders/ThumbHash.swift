import Foundation

/// Evan Wallace's ThumbHash (evanw.github.io/thumbhash): an image of at most 100x100 as a DCT of luminance, two
/// colour channels and alpha, in about 25 bytes; it keeps the aspect ratio and alpha, which BlurHash does not.
///
/// The encoder follows the reference's Rust encoder (the `thumbhash` crate, which the PyPI package `thumbhash-rs`
/// wraps) operation for operation, in single precision, so the same pixels give the same bytes: `PlaceholderTests` and
/// `scripts/placeholder_check.py` compare them.
public enum ThumbHash {
    /// The largest side the encoder takes.
    public static let maxSide = 100

    /// The ThumbHash of `pixels` (RGBA, not premultiplied, rows packed), at most `maxSide` a side.
    static func encode(rgba pixels: [UInt8], width w: Int, height h: Int) -> [UInt8] {
        precondition(w >= 1 && h >= 1 && w <= maxSide && h <= maxSide && pixels.count == w * h * 4)
        var (averageR, averageG, averageB, averageA): (Float, Float, Float, Float) = (0, 0, 0, 0)
        for at in stride(from: 0, to: pixels.count, by: 4) {
            let alpha = Float(pixels[at + 3]) / 255
            averageR += alpha / 255 * Float(pixels[at])
            averageG += alpha / 255 * Float(pixels[at + 1])
            averageB += alpha / 255 * Float(pixels[at + 2])
            averageA += alpha
        }
        if averageA > 0 {
            averageR /= averageA
            averageG /= averageA
            averageB /= averageA
        }
        let hasAlpha = averageA < Float(w * h)
        let limit = hasAlpha ? 5 : 7  // fewer luminance components when alpha takes room
        let lx = max(1, Int((Float(limit * w) / Float(max(w, h))).rounded()))
        let ly = max(1, Int((Float(limit * h) / Float(max(w, h))).rounded()))
        var l: [Float] = [], p: [Float] = [], q: [Float] = [], a: [Float] = []
        l.reserveCapacity(w * h); p.reserveCapacity(w * h); q.reserveCapacity(w * h); a.reserveCapacity(w * h)
        // Composited atop the average colour, then as luminance, yellow-blue and red-green.
        for at in stride(from: 0, to: pixels.count, by: 4) {
            let alpha = Float(pixels[at + 3]) / 255
            let r = averageR * (1 - alpha) + alpha / 255 * Float(pixels[at])
            let g = averageG * (1 - alpha) + alpha / 255 * Float(pixels[at + 1])
            let b = averageB * (1 - alpha) + alpha / 255 * Float(pixels[at + 2])
            l.append((r + g + b) / 3)
            p.append((r + g) / 2 - b)
            q.append(r - g)
            a.append(alpha)
        }
        func encodeChannel(_ channel: [Float], _ nx: Int, _ ny: Int) -> (dc: Float, ac: [Float], scale: Float) {
            var dc: Float = 0, ac: [Float] = [], scale: Float = 0
            var fx = [Float](repeating: 0, count: w)
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) {
                    var f: Float = 0
                    for x in 0..<w { fx[x] = cos(Float.pi / Float(w) * Float(cx) * (Float(x) + 0.5)) }
                    for y in 0..<h {
                        let fy = cos(Float.pi / Float(h) * Float(cy) * (Float(y) + 0.5))
                        for x in 0..<w { f += channel[x + y * w] * fx[x] * fy }
                    }
                    f /= Float(w * h)
                    if cx > 0 || cy > 0 {
                        ac.append(f)
                        scale = max(abs(f), scale)
                    } else {
                        dc = f
                    }
                    cx += 1
                }
            }
            if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
            return (dc, ac, scale)
        }
        let lc = encodeChannel(l, max(lx, 3), max(ly, 3))
        let pc = encodeChannel(p, 3, 3)
        let qc = encodeChannel(q, 3, 3)
        let ac: (dc: Float, ac: [Float], scale: Float) = hasAlpha ? encodeChannel(a, 5, 5) : (1, [], 1)
        let isLandscape = w > h
        // Rust's `as` conversions: rounded half away from zero, saturating at 0.
        func whole(_ value: Float) -> UInt32 { UInt32(max(0, value.rounded())) }
        let header24 = whole(63 * lc.dc) | whole(31.5 + 31.5 * pc.dc) << 6 | whole(31.5 + 31.5 * qc.dc) << 12
            | whole(31 * lc.scale) << 18 | (hasAlpha ? 1 << 23 : 0)
        let header16 = UInt32(isLandscape ? ly : lx) | whole(63 * pc.scale) << 3 | whole(63 * qc.scale) << 9 | (isLandscape ? 1 << 15 : 0)
        var hash: [UInt8] = [UInt8(truncatingIfNeeded: header24), UInt8(truncatingIfNeeded: header24 >> 8),
                             UInt8(truncatingIfNeeded: header24 >> 16), UInt8(truncatingIfNeeded: header16), UInt8(truncatingIfNeeded: header16 >> 8)]
        if hasAlpha { hash.append(UInt8(truncatingIfNeeded: whole(15 * ac.dc) | whole(15 * ac.scale) << 4)) }
        var isOdd = false
        for f in lc.ac + pc.ac + qc.ac + (hasAlpha ? ac.ac : []) {
            let u = UInt8(truncatingIfNeeded: whole(15 * f))
            if isOdd { hash[hash.count - 1] |= u << 4 } else { hash.append(u) }
            isOdd.toggle()
        }
        return hash
    }
}

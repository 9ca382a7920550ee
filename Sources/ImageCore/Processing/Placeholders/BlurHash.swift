import Foundation

/// Wolt's BlurHash (github.com/woltapp/blurhash): an image as a few cosine components, in base 83.
///
/// The encoder follows the reference encoders step for step (the sums taken row by row, as the PyPI package `blurhash`
/// takes them, in double precision), so the same pixels give the same string: `PlaceholderTests` and
/// `scripts/placeholder_check.py` compare it with the PyPI encoder.
public enum BlurHash {
    /// The components across and down for an image of `width` by `height`: 4 along the longer side and the shorter in
    /// proportion (1...9), as the reference's README advises (the components should follow the aspect ratio).
    public static func components(width: Int, height: Int) -> (x: Int, y: Int) {
        let long = max(width, height), short = min(width, height)
        let other = min(9, max(1, Int((4 * Double(short) / Double(max(1, long))).rounded())))
        return width >= height ? (4, other) : (other, 4)
    }

    /// The BlurHash of `pixels` (RGB, 3 bytes a pixel, rows packed), with `componentsX` by `componentsY` (1...9 each).
    static func encode(rgb pixels: [UInt8], width: Int, height: Int, componentsX: Int, componentsY: Int) -> String {
        precondition((1...9).contains(componentsX) && (1...9).contains(componentsY) && pixels.count == width * height * 3)
        let linear = pixels.map { linearTable[Int($0)] }
        let (w, h) = (Double(width), Double(height))
        // Each component's cosine at each column, computed once rather than at every pixel: the same values.
        let cosines = (0..<componentsX).flatMap { i in (0..<width).map { x in cos(Double.pi * Double(i) * Double(x) / w) } }
        var factors: [(Double, Double, Double)] = []
        var maximum = 0.0
        for j in 0..<componentsY {
            for i in 0..<componentsX {
                let normalisation = i == 0 && j == 0 ? 1.0 : 2.0
                var (r, g, b) = (0.0, 0.0, 0.0)
                for y in 0..<height {
                    let cosY = cos(Double.pi * Double(j) * Double(y) / h)
                    for x in 0..<width {
                        let basis = normalisation * cosines[i * width + x] * cosY
                        let at = (y * width + x) * 3
                        r += basis * linear[at]
                        g += basis * linear[at + 1]
                        b += basis * linear[at + 2]
                    }
                }
                let scale = w * h
                factors.append((r / scale, g / scale, b / scale))
                if i != 0 || j != 0 { maximum = max(maximum, abs(r / scale), abs(g / scale), abs(b / scale)) }
            }
        }
        let dc = factors[0]
        let dcValue = (linearToSRGB(dc.0) << 16) + (linearToSRGB(dc.1) << 8) + linearToSRGB(dc.2)
        let quantisedMaximum = Int(max(0, min(82, (maximum * 166 - 0.5).rounded(.down))))
        let acScale = Double(quantisedMaximum + 1) / 166
        func quantised(_ value: Double) -> Int {
            Int(max(0, min(18, (signPow(value / acScale, 0.5) * 9 + 9.5).rounded(.down))))
        }
        var hash = base83((componentsX - 1) + (componentsY - 1) * 9, length: 1) + base83(quantisedMaximum, length: 1)
            + base83(dcValue, length: 4)
        for (r, g, b) in factors.dropFirst() {
            hash += base83(quantised(r) * 19 * 19 + quantised(g) * 19 + quantised(b), length: 2)
        }
        return hash
    }

    /// sRGB 0...255 to linear light, as the reference converts.
    static let linearTable: [Double] = (0..<256).map { value in
        let v = Double(value) / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    /// Linear light to sRGB 0...255, as the reference converts (truncating after adding a half).
    static func linearToSRGB(_ value: Double) -> Int {
        let v = max(0, min(1, value))
        return v <= 0.0031308 ? Int(v * 12.92 * 255 + 0.5) : Int((1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }

    private static func signPow(_ value: Double, _ exponent: Double) -> Double {
        copysign(pow(abs(value), exponent), value)
    }

    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    private static func base83(_ value: Int, length: Int) -> String {
        var digits = [Character](repeating: "0", count: length)
        var rest = value
        for index in (0..<length).reversed() {
            digits[index] = alphabet[rest % 83]
            rest /= 83
        }
        return String(digits)
    }
}

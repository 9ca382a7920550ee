import CImageOps
import Testing
import TileCacheOrigin

@Suite("Lanczos resample's SIMD loops")
struct ResampleTests {
    /// The SIMD passes (SSE2 vertical, sixteen columns at a time; SSE4.1 horizontal for 3 and 4 channels) must give the
    /// plain C loops' bytes: random sizes, regions, channel counts and enlargements, both passes or one alone, on noise
    /// and on hard edges (whose negative lobes and overshoots exercise the clamp).
    @Test("the SIMD resample gives the portable resample's bytes on 600 random cases")
    func simdMatchesPortable() {
        var random = SplitMix64(seed: 35)
        var mismatches: [String] = []
        for index in 0..<600 {
            let width = Int.random(in: 1...260, using: &random), height = Int.random(in: 1...140, using: &random)
            let channels = Int.random(in: 1...4, using: &random)
            var x0 = Double.random(in: 0..<Double(width) * 0.4, using: &random)
            var x1 = Double(width) - Double.random(in: 0..<Double(width) * 0.4, using: &random)
            var y0 = Double.random(in: 0..<Double(height) * 0.4, using: &random)
            var y1 = Double(height) - Double.random(in: 0..<Double(height) * 0.4, using: &random)
            var outWidth = Int.random(in: 1...(2 * width + 1), using: &random)
            var outHeight = Int.random(in: 1...(2 * height + 1), using: &random)
            // One case in four keeps the width (the vertical pass alone), one the height (the horizontal pass alone): one
            // pass, reading and writing the caller's buffers.
            if index % 4 == 1 { (x0, x1, outWidth) = (0, Double(width), width) }
            if index % 4 == 2 { (y0, y1, outHeight) = (0, Double(height), height) }
            let edges = index % 3 == 0  // 0 and 255 in stripes: the largest overshoots
            let pixels = (0..<width * height * channels).map { offset -> UInt8 in
                edges ? ((offset / channels + offset / (width * channels)) % 5 < 2 ? 255 : 0) : UInt8.random(in: 0...255, using: &random)
            }
            var simd = [UInt8](repeating: 0, count: outWidth * outHeight * channels)
            var portable = simd
            let statuses = pixels.withUnsafeBufferPointer { input in
                (simd.withUnsafeMutableBufferPointer { output in
                    tio_resample_lanczos3(input.baseAddress, Int32(width), Int32(height), Int32(channels), x0, y0, x1, y1,
                                          output.baseAddress, Int32(outWidth), Int32(outHeight))
                }, portable.withUnsafeMutableBufferPointer { output in
                    tio_resample_lanczos3_portable(input.baseAddress, Int32(width), Int32(height), Int32(channels), x0, y0, x1, y1,
                                                   output.baseAddress, Int32(outWidth), Int32(outHeight))
                })
            }
            let subject = "\(width)x\(height)x\(channels) (\(x0), \(y0))-(\(x1), \(y1)) to \(outWidth)x\(outHeight)"
            if statuses != (0, 0) {
                mismatches.append("\(subject): statuses \(statuses)")
            } else if let first = simd.indices.first(where: { simd[$0] != portable[$0] }) {
                mismatches.append("\(subject): byte \(first) is \(simd[first]), portably \(portable[first])")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) of 600 differ: \(mismatches.prefix(5))")
    }
}

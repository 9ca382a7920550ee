import Foundation

/// Where an image's attention lies: a port of libvips' `vips_smartcrop` with `VIPS_INTERESTING_ATTENTION` (itself from
/// smartcrop.js), which imgproxy's `g:sm` uses. The image is reduced to 32 x 32 (the precision a crop can be placed
/// with), and three features are scored per pixel, in CIE XYZ from sRGB:
/// - **edges**: the absolute Laplacian of luminance (Y), times 5;
/// - **skin**: 100 - 100 x the distance of the pixel's normalised XYZ from smartcrop.js's skin colour
///   (0.78, 0.57, 0.44), where Y > 5;
/// - **saturation**: CIE Lab's a*, where Y > 5.
/// Their sum is blurred with a Gaussian whose sigma grows with the crop's share of the image (a tenth of the crop's
/// diagonal at that scale, at least 1), and the brightest pixel is the point the crop is centred on.
/// Checked against libvips' own smartcrop on real photos (docs/sources.md has the figures).
/// Thread-safety: stateless.
enum Attention {
    /// The side the image is reduced to.
    static let side = 32

    /// The attention point of `image` (upright pixels), as fractions of its width and height, for a crop of
    /// `cropWidth` x `cropHeight` of its pixels.
    static func point(of image: DecodedImage, cropWidth: Double, cropHeight: Double, subject: String) throws(ImageCoreError) -> (x: Double, y: Double) {
        let small = try image.expandedToColor().flattened(over: .white)
            .resampled(x0: 0, y0: 0, x1: Double(image.width), y1: Double(image.height), width: side, height: side, subject: subject)
        let hscale = Double(side) / Double(image.width), vscale = Double(side) / Double(image.height)
        let sigma = max((pow(cropWidth * hscale, 2) + pow(cropHeight * vscale, 2)).squareRoot() / 10, 1)
        let count = side * side
        var x = [Double](repeating: 0, count: count), y = x, z = x
        for index in 0..<count {
            let r = linear(small.pixels[index * 3]), g = linear(small.pixels[index * 3 + 1]), b = linear(small.pixels[index * 3 + 2])
            x[index] = 100 * (0.4124 * r + 0.3576 * g + 0.1805 * b)
            y[index] = 100 * (0.2126 * r + 0.7152 * g + 0.0722 * b)
            z[index] = 100 * (0.0193 * r + 0.1192 * g + 0.9505 * b)
        }
        func at(_ plane: [Double], _ column: Int, _ row: Int) -> Double {
            plane[min(max(row, 0), side - 1) * side + min(max(column, 0), side - 1)]
        }
        var score = [Double](repeating: 0, count: count)
        for row in 0..<side {
            for column in 0..<side {
                let index = row * side + column
                let laplacian = 4 * y[index] - at(y, column, row - 1) - at(y, column - 1, row) - at(y, column + 1, row) - at(y, column, row + 1)
                var total = abs(laplacian * 5)
                if y[index] > 5 {
                    let magnitude = (x[index] * x[index] + y[index] * y[index] + z[index] * z[index]).squareRoot()
                    let (nx, ny, nz) = magnitude > 0 ? (x[index] / magnitude, y[index] / magnitude, z[index] / magnitude) : (0, 0, 0)
                    let distance = ((nx - 0.78) * (nx - 0.78) + (ny - 0.57) * (ny - 0.57) + (nz - 0.44) * (nz - 0.44)).squareRoot()
                    total += 100 - 100 * distance
                    total += labA(x[index], y[index])
                }
                score[index] = total
            }
        }
        let blurred = gaussianBlur(score, sigma: sigma)
        var best = 0
        for index in 1..<count where blurred[index] > blurred[best] { best = index }
        // libvips: the 32-pixel position back in image pixels, truncated.
        let pointX = Double(Int(Double(best % side) / hscale)), pointY = Double(Int(Double(best / side) / vscale))
        return (pointX / Double(image.width), pointY / Double(image.height))
    }

    /// The sRGB transfer function undone: 0...1 linear light.
    private static func linear(_ value: UInt8) -> Double {
        let v = Double(value) / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    /// CIE Lab's a* of an XYZ colour (D65 white, Y of white 100).
    private static func labA(_ x: Double, _ y: Double) -> Double {
        func f(_ t: Double) -> Double { t > 0.008856 ? cbrt(t) : 7.787 * t + 16 / 116 }
        return 500 * (f(x / 95.047) - f(y / 100))
    }

    /// A separable Gaussian blur as libvips' `gaussblur` makes it: the mask reaches where the Gaussian falls to 0.2 of
    /// its peak, normalised; edges repeat the border pixels.
    private static func gaussianBlur(_ plane: [Double], sigma: Double) -> [Double] {
        let radius = max(1, Int((sigma * (2 * log(5.0)).squareRoot()).rounded(.down)))
        var mask = (-radius...radius).map { exp(-Double($0 * $0) / (2 * sigma * sigma)) }
        let total = mask.reduce(0, +)
        mask = mask.map { $0 / total }
        var horizontal = [Double](repeating: 0, count: plane.count), out = horizontal
        for row in 0..<side {
            for column in 0..<side {
                var sum = 0.0
                for (offset, weight) in zip(-radius...radius, mask) {
                    sum += weight * plane[row * side + min(max(column + offset, 0), side - 1)]
                }
                horizontal[row * side + column] = sum
            }
        }
        for row in 0..<side {
            for column in 0..<side {
                var sum = 0.0
                for (offset, weight) in zip(-radius...radius, mask) {
                    sum += weight * horizontal[min(max(row + offset, 0), side - 1) * side + column]
                }
                out[row * side + column] = sum
            }
        }
        return out
    }
}

// Micro-benchmarks of ImageCore's hot paths: wall time and mallocs per operation.
import Benchmark
import Foundation
import ImageCore
import TileCacheOrigin

let catalogue = ElementCatalogue.standard
let synthesizer = ImageSynthesizer(seed: 1)
let thumbnail = synthesizer.jpeg(catalogue.element(number: 26)!, kind: .thumbnail)
let photo = synthesizer.jpeg(catalogue.element(number: 79)!, kind: .full)
/// A PngSuite file from the test fixtures (32x32 RGBA, 8 bits per channel).
let png: [UInt8] = {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "../../../Tests/ImageCoreTests/Fixtures/pngsuite/basn6a08.png").standardized.path
    guard let data = FileManager.default.contents(atPath: path) else { fatalError("missing PNG fixture at \(path)") }
    return [UInt8](data)
}()
let inspector = ImageInspector()

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        maxDuration: .seconds(2), maxIterations: 1_000_000)

    Benchmark("MemoryCache hit", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let cache = MemoryCache<String, Int>(countLimit: 100, costLimit: 10 << 20)
        let keys = (0..<100).map { "http://www.theodoregray.com/periodictable/Tiles/\($0)/s7.JPG" }
        for (index, key) in keys.enumerated() { cache.set(index, forKey: key, cost: 1000) }
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            blackHole(cache.value(forKey: keys[iteration % 100]))
        }
    }

    Benchmark("MemoryCache insert with eviction", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let cache = MemoryCache<String, Int>(countLimit: 100, costLimit: 10 << 20)
        let keys = (0..<1000).map { "http://images-of-elements.com/\($0).jpg" }
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            cache.set(iteration, forKey: keys[iteration % 1000], cost: 150_000)
        }
    }

    Benchmark("Pipeline memory hit", configuration: .init(scalingFactor: .kilo)) { benchmark in
        var configuration = ImagePipeline.Configuration()
        configuration.diskDirectory = nil
        let pipeline = ImagePipeline(configuration: configuration)
        let url = "http://www.theodoregray.com/periodictable/Tiles/026/s7.JPG"
        let validated = try inspector.validate(thumbnail, subject: url)
        pipeline.memoryCache.set(CachedImage(image: validated.image, header: validated.header), forKey: url,
                                 cost: validated.image.cost)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(try await pipeline.image(for: url)) }
    }

    Benchmark("Header inspection JPEG thumbnail") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try inspector.inspectHeader(thumbnail, subject: "t")) }
    }

    Benchmark("Header inspection PNG") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try inspector.inspectHeader(png, subject: "p")) }
    }

    Benchmark("Full decode PNG 32x32 RGBA") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try inspector.validate(png, subject: "p")) }
    }

    let thumbnailPixels = Double(try! inspector.inspectHeader(thumbnail, subject: "t")).megapixels
    Benchmark("Full decode JPEG thumbnail (\(String(format: "%.3f", thumbnailPixels)) MP)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try inspector.validate(thumbnail, subject: "t")) }
    }

    let photoPixels = Double(try! inspector.inspectHeader(photo, subject: "p")).megapixels
    Benchmark("Full decode JPEG photo (\(String(format: "%.3f", photoPixels)) MP)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try inspector.validate(photo, subject: "p")) }
    }
}

extension Double {
    init(_ header: ImageHeader) { self = Double(header.width * header.height) }
    var megapixels: Double { self / 1_000_000 }
}

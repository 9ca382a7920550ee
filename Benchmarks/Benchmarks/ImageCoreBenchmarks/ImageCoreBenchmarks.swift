// Micro-benchmarks of ImageCore's hot paths: wall time and mallocs per operation.
import Benchmark
import Catalogue
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
        "../../../Tests/TestSupport/pngsuite/basn6a08.png").standardized.path
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

    Benchmark("MemoryCache contended hit, 2 tasks", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let cache = MemoryCache<String, Int>(countLimit: 100, costLimit: 10 << 20)
        let keys = (0..<100).map { "http://www.theodoregray.com/periodictable/Tiles/\($0)/s7.JPG" }
        for (index, key) in keys.enumerated() { cache.set(index, forKey: key, cost: 1000) }
        let iterations = benchmark.scaledIterations.count
        benchmark.startMeasurement()
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<2 {
                group.addTask {
                    for iteration in 0..<(iterations / 2) { blackHole(cache.value(forKey: keys[(iteration + worker * 50) % 100])) }
                }
            }
        }
    }

    Benchmark("DiskCache write (thumbnail)", configuration: .init(maxIterations: 5_000)) { benchmark in
        let directory = NSTemporaryDirectory() + "tilecache-bench-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try DiskCache(directory: directory, sizeLimit: 1 << 30)
        let header = try inspector.inspectHeader(thumbnail, subject: "t")
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            let url = "http://bench/\(iteration % 500).jpg"
            try cache.store(thumbnail, metadata: DiskCacheMetadata(url: url, header: header, bytes: thumbnail, contentType: "image/jpeg",
                                                                     etag: nil, lastModified: nil, cacheControl: nil))
        }
    }

    Benchmark("DiskCache read (thumbnail, checksum verified)") { benchmark in
        let directory = NSTemporaryDirectory() + "tilecache-bench-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try DiskCache(directory: directory, sizeLimit: 1 << 30)
        let header = try inspector.inspectHeader(thumbnail, subject: "t")
        for index in 0..<100 {
            try cache.store(thumbnail, metadata: DiskCacheMetadata(url: "http://bench/\(index).jpg", header: header, bytes: thumbnail,
                                                                     contentType: "image/jpeg", etag: nil, lastModified: nil, cacheControl: nil))
        }
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations { blackHole(cache.entry(for: "http://bench/\(iteration % 100).jpg")) }
    }

    Benchmark("Pipeline disk hit (read, verify, decode thumbnail)") { benchmark in
        let directory = NSTemporaryDirectory() + "tilecache-bench-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = ImagePipeline.Configuration()
        configuration.diskDirectory = directory
        configuration.memoryCountLimit = 1  // two URLs alternate, so every request misses memory
        let pipeline = ImagePipeline(configuration: configuration)
        let header = try inspector.inspectHeader(thumbnail, subject: "t")
        for index in 0..<2 {
            try pipeline.diskCache!.store(thumbnail, metadata: DiskCacheMetadata(
                url: "http://bench/\(index).jpg", header: header, bytes: thumbnail, contentType: "image/jpeg", etag: nil,
                lastModified: nil, cacheControl: "max-age=86400"))
        }
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations { blackHole(try await pipeline.image(for: "http://bench/\(iteration % 2).jpg")) }
    }

    Benchmark("Resize photo to 128 px (scaled decode, resample, encode)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try ImageProcessor.process(photo, ImageProcessing(width: 128), subject: "p")) }
    }

    Benchmark("Pipeline memory hit", configuration: .init(scalingFactor: .kilo)) { benchmark in
        // Warmed the way a user warms it: one disk hit puts the decoded image in memory.
        var configuration = ImagePipeline.Configuration()
        let directory = NSTemporaryDirectory() + "tilecache-bench-memory-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        configuration.diskDirectory = directory
        let pipeline = ImagePipeline(configuration: configuration)
        let url = "http://www.theodoregray.com/periodictable/Tiles/026/s7.JPG"
        try pipeline.diskCache!.store(thumbnail, metadata: DiskCacheMetadata(
            url: url, header: try inspector.inspectHeader(thumbnail, subject: url), bytes: thumbnail, contentType: "image/jpeg",
            etag: nil, lastModified: nil, cacheControl: "max-age=86400"))
        _ = try await pipeline.image(for: url)
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

// swift-tools-version: 6.1
// Micro-benchmarks for ImageCore (ordo-one/benchmark), kept out of the main build so `make test` never pays for them.
// Run: `make bench` (or `cd Benchmarks && swift package benchmark`).
import Foundation
import PackageDescription

/// A path dependency's identity is its folder's name, which differs between checkouts (`main`, a CI clone, ...).
let rootPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "TileCacheBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.36.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "ImageCoreBenchmarks",
            dependencies: [
                .product(name: "ImageCore", package: rootPackage),
                .product(name: "Catalogue", package: rootPackage),
                .product(name: "TileCacheOrigin", package: rootPackage),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/ImageCoreBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // Full-decode throughput of one JPEG in memory, the way tjbench measures (used by compare/run.sh).
        .executableTarget(
            name: "DecodeThroughput",
            dependencies: [.product(name: "ImageCore", package: rootPackage)],
            path: "DecodeThroughput"
        ),
        // MemoryCache against Foundation's NSCache with the same limits (used by compare/run.sh).
        .executableTarget(
            name: "CacheComparison",
            dependencies: [.product(name: "ImageCore", package: rootPackage)],
            path: "CacheComparison"
        ),
        // The floors under the service: fixed bytes from a minimal Hummingbird route and minimal SwiftNIO HTTP/1 and
        // HTTP/2-over-TLS servers.
        .executableTarget(
            name: "ServeFloor",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "ServeFloor"
        ),
    ]
)

// swift-tools-version: 6.1
import PackageDescription

/// Rules every module of the package is built with.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "TileCache",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ImageCore", targets: ["ImageCore"]),
        .library(name: "TileCacheOrigin", targets: ["TileCacheOrigin"]),
        .library(name: "TileCacheCLI", targets: ["TileCacheCLI"]),
        .executable(name: "tilecache", targets: ["TileCacheTool"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        // C libraries from Debian, each behind a small shim header.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CTurboJPEG",
            pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"])]
        ),
        .systemLibrary(
            name: "CPNG",
            pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"])]
        ),
        .target(
            name: "ImageCore",
            dependencies: [
                "CCurl", "CTurboJPEG", "CPNG",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TileCacheOrigin",
            dependencies: [
                "ImageCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TileCacheCLI",
            dependencies: [
                "ImageCore", "TileCacheOrigin",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "TileCacheTool",
            dependencies: ["TileCacheCLI"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TileCacheCLITests",
            dependencies: ["TileCacheCLI", "ImageCore", "TileCacheOrigin"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ImageCoreTests",
            dependencies: ["ImageCore", "TileCacheOrigin"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
    ]
)

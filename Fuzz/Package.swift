// swift-tools-version: 6.1
// A libFuzzer harness for ImageCore's inspector and decoders, kept out of the main build (libFuzzer supplies `main`).
// Run: `make fuzz` (scripts/fuzz.sh builds it with `-sanitize=fuzzer,address` and seeds it).
import Foundation
import PackageDescription

/// A path dependency's identity is its folder's name, which differs between checkouts (`main`, a CI clone, ...).
let rootPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

let package = Package(
    name: "TileCacheFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "..")],
    targets: [
        .target(name: "CFuzzerDriver", path: "Sources/CFuzzerDriver"),
        .executableTarget(
            name: "ImageFuzzer",
            dependencies: ["CFuzzerDriver", .product(name: "ImageCore", package: rootPackage)],
            path: "Sources/ImageFuzzer",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
    ]
)

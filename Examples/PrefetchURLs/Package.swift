// swift-tools-version: 6.1
// An example of depending on TileCache's library products, as another package would: by path here, by URL and version
// elsewhere (`.package(url: "https://github.com/…/TileCache", from: "0.1.0")`). `make test` builds it, so a library
// target that another package cannot depend on (one with `unsafeFlags`, say) fails the suite.
import PackageDescription

let package = Package(
    name: "PrefetchURLs",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "TileCache", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "PrefetchURLs",
            dependencies: [.product(name: "ImageCore", package: "TileCache")]
        ),
    ]
)

// swift-tools-version: 6.1
import PackageDescription

/// Rules every module of the package is built with.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // As Hummingbird does: a file sees only the members of modules it imports itself, and an import is internal unless
    // written `public import`, so each module's public surface says which modules it exposes.
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "TileCache",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "ImageCore", targets: ["ImageCore"]),
        .library(name: "SharedStore", targets: ["SharedStore"]),
        .library(name: "Catalogue", targets: ["Catalogue"]),
        .library(name: "TileCacheOrigin", targets: ["TileCacheOrigin"]),
        .library(name: "TileCacheService", targets: ["TileCacheService"]),
        .library(name: "TileCacheCLI", targets: ["TileCacheCLI"]),
        .library(name: "CacheLab", targets: ["CacheLab"]),
        .library(name: "DocumentLinks", targets: ["DocumentLinks"]),
        .executable(name: "tilecache", targets: ["TileCacheTool"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),  // LogHandler.log(event:)
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Without its default traits: ConfigurationSupport builds swift-configuration (48 files) for an initialiser we
        // do not call, FullFoundation only its URL-encoded form coder's date options, which we do not use.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.1.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),  // serve --tls-cert/--tls-key
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.36.0"),  // the fast path's HTTP/2 streams
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.25.0"),  // their HTTPTypes codec
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),  // the CLI's config file
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.0"),  // generated inputs in tests
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
        .systemLibrary(
            name: "CExpat",
            pkgConfig: "expat",
            providers: [.apt(["libexpat1-dev"])]
        ),
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        .systemLibrary(
            name: "CCMark",
            pkgConfig: "libcmark",
            providers: [.apt(["libcmark-dev"])]
        ),
        .systemLibrary(
            name: "CWebP",
            pkgConfig: "libwebp",
            providers: [.apt(["libwebp-dev"])]
        ),
        .systemLibrary(
            name: "CGIF",
            pkgConfig: "libgif",
            providers: [.apt(["libgif-dev"])]
        ),
        // No pkgConfig: libavif.pc's cflags carry -DAVIF_DLL, a flag SwiftPM refuses (with a warning every build); the
        // header and the library are on the default paths.
        .systemLibrary(
            name: "CAVIF",
            providers: [.apt(["libavif-dev"])]
        ),
        // SHA-256 and the HMACs of signed URLs, from OpenSSL's libcrypto (libcurl loads it already): swift-crypto
        // would compile a second copy of BoringSSL beside swift-nio-ssl's, a third of the debug build.
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // glibc's mallopt, which Swift's Glibc module leaves out (`serve` fixes the mmap threshold: ServiceMemory).
        .systemLibrary(name: "CMalloc"),
        // PostgreSQL's own client library, for favourites on PostgreSQL (libpq's sslmode, connect_timeout, keepalives).
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]
        ),
        // JPEG decoding over libjpeg's own API (libjpeg-turbo): one decoder per image, every warning recorded, and
        // libjpeg's longjmp kept in C. TurboJPEG still encodes.
        .target(
            name: "CJPEGDecoder",
            linkerSettings: [.linkedLibrary("jpeg")]
        ),
        // The thumbnailer's pixel work (Lanczos-3 resample, alpha premultiplication, EXIF orientation, ICC to sRGB with
        // Little CMS from Debian's liblcms2-dev). No `unsafeFlags`: another package must be able to depend on the
        // libraries (release builds compile it at -O2, which vectorises the vertical pass as -O3 did).
        .target(
            name: "CImageOps",
            linkerSettings: [.linkedLibrary("m"), .linkedLibrary("lcms2"), .linkedLibrary("z")]
        ),
        .target(
            name: "ImageCore",
            dependencies: [
                "CCurl", "CTurboJPEG", "CPNG", "CJPEGDecoder", "CImageOps", "CWebP", "CGIF", "CAVIF", "CLibCrypto",
                .product(name: "NIOCore", package: "swift-nio"),  // ByteBuffer: encoded images served without copies
                .product(name: "NIOPosix", package: "swift-nio"),  // NIOThreadPool: blocking work off the cooperative pool
                // pthread-backed locks, which ThreadSanitizer understands (Synchronization.Mutex uses raw futexes).
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "DequeModule", package: "swift-collections"),  // the semaphore's queue
                .product(name: "GRDB", package: "GRDB.swift"),  // the disk cache's index (SQLite)
            ],
            swiftSettings: swiftSettings
        ),
        // A fleet's shared tier: an S3-compatible bucket between the local disk and the origin (a DataTier of the
        // pipeline), over ImageCore's libcurl engine (SigV4 by libcurl); S3's XML read by Expat.
        .target(
            name: "SharedStore",
            dependencies: [
                "ImageCore", "CExpat",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "DequeModule", package: "swift-collections"),  // the write queue
            ],
            swiftSettings: swiftSettings
        ),
        // The periodic table: elements, image kinds, both hosts' URLs in both directions, other spellings of names,
        // the known-missing rule. ImageCore knows nothing of it.
        .target(
            name: "Catalogue",
            swiftSettings: swiftSettings
        ),
        // gzip (zlib) and br (Debian's libbrotli-dev) of the service's JSON, HTML, JavaScript and CSS responses.
        .target(
            name: "CHTTPCompression",
            linkerSettings: [.linkedLibrary("z"), .linkedLibrary("brotlienc")]
        ),
        // The origin's extra encoders (progressive/gray/CMYK JPEG, 16-bit/interlaced PNG, gzip): C, so libpng's
        // longjmp stays in C.
        .target(
            name: "COriginCodecs",
            dependencies: ["CTurboJPEG", "CPNG"],
            linkerSettings: [.linkedLibrary("z")]
        ),
        .target(
            name: "TileCacheOrigin",
            dependencies: [
                "ImageCore", "Catalogue", "COriginCodecs",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The hit-rate lab: access traces replayed against the real MemoryCache and reference policies.
        .target(
            name: "CacheLab",
            dependencies: [
                "ImageCore", "Catalogue", "TileCacheOrigin",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TileCacheService",
            dependencies: [
                "ImageCore", "SharedStore", "Catalogue", "CHTTPCompression", "CLibPQ", "CMalloc",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),  // HTTPServerBuilder
                .product(name: "HummingbirdTLS", package: "hummingbird"),  // serve --tls-cert/--tls-key
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),  // HTTP/2 over TLS by ALPN
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),  // the fast path's HTTPS server
                .product(name: "NIOHPACK", package: "swift-nio-http2"),  // its answers on the connection, before the streams
                .product(name: "NIOHTTPTypesHTTP2", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),  // the HTTP/1 fast path, ahead of the codec
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),  // Data(buffer:)
                .product(name: "NIOPosix", package: "swift-nio"),  // NIOThreadPool: the threads libpq blocks on
                .product(name: "NIOHTTP1", package: "swift-nio"),  // HTTP10ConnectionClose, ahead of Hummingbird's codec
                .product(name: "Logging", package: "swift-log"),
            ],
            // The web front end's source files; they are compiled in (WebAssets+Embedded.swift, scripts/embed-web.py).
            exclude: ["Web"],
            swiftSettings: swiftSettings
        ),
        // The images a document references (HTML, Markdown, JSON, CSS, sitemaps), with their lines: libxml2's HTML
        // parser, cmark, Expat; URL resolution by RFC 3986.
        .target(
            name: "DocumentLinks",
            dependencies: ["CLibXML2", "CCMark", "CExpat"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TileCacheCLI",
            dependencies: [
                "ImageCore", "DocumentLinks", "SharedStore", "Catalogue", "TileCacheOrigin", "TileCacheService", "CacheLab",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "NIOCore", package: "swift-nio"),  // IOError: why a port could not be bound
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),  // serve's service group
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),  // and the signals it shuts down on
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "TileCacheTool",
            dependencies: ["TileCacheCLI"],
            swiftSettings: swiftSettings
        ),
        // posix_spawn's close-every-other-descriptor action, for the tests' child processes (Swift's Glibc lacks it).
        .target(name: "CSpawn", path: "Tests/CSpawn"),
        // What the test suites share: real photos (with their licences), PngSuite, Robert Ancell's GIF test suite,
        // libavif's test files, libwebp's test image and the verdict corpus; temporary
        // directories, the origin's lifetime, test-time scaling, and the service harness.
        .target(
            name: "TestSupport",
            dependencies: [
                "ImageCore", "SharedStore", "Catalogue", "TileCacheOrigin", "TileCacheService", "CSpawn",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TestSupport",
            exclude: ["photos/LICENSES.md", "documents"],  // documents: read by scripts/extract_check.py
            resources: [.copy("photos"), .copy("pngsuite"), .copy("gifsuite"), .copy("avif"), .copy("libwebp")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TileCacheServiceTests",
            dependencies: [
                "TileCacheService", "ImageCore", "SharedStore", "Catalogue", "TileCacheOrigin", "TestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOPosix", package: "swift-nio"),  // raw HTTP/1.0 over a socket
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),  // the fast path's request, against it
                // NIO's HTTP/1 encoder in an embedded channel: the reference for the fast path's server's encoding.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                // swift-nio-extras' HTTP/2 codec: the reference for the fast path's HTTP/2 conversions.
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP2", package: "swift-nio-extras"),
                // Generated request heads: the fast path's head reader against NIO's decoder.
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "TileCacheCLITests",
            dependencies: ["TileCacheCLI", "ImageCore", "SharedStore", "Catalogue", "TileCacheOrigin", "CacheLab", "TestSupport",
                           .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           // A loopback server for --extract's URL documents.
                           .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "HummingbirdTesting", package: "hummingbird"),
                           .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CacheLabTests",
            dependencies: ["CacheLab", "ImageCore", "Catalogue", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SharedStoreTests",
            dependencies: ["SharedStore", "ImageCore", "TileCacheOrigin", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "DocumentLinksTests",
            dependencies: ["DocumentLinks"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CatalogueTests",
            dependencies: ["Catalogue"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ImageCoreTests",
            dependencies: [
                "ImageCore", "CImageOps", "Catalogue", "TileCacheOrigin", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
    ]
)

public import Catalogue
import Foundation
public import ImageCore

/// Everything `tilecache serve` is configured with.
public struct ServiceConfiguration: Sendable {
    /// Address to bind.
    public var host = "127.0.0.1"
    /// Port to bind (0 picks a free one).
    public var port = 8080
    /// Where catalogue images are fetched from.
    public var builder = ImageURLBuilder()
    /// Caches, downloader, validation and the limits of image loads. A service's memory tier holds encoded bytes
    /// (originals and resized variants, sent without re-encoding): by default up to 64 MiB in 100,000 entries; loads
    /// waiting for upstream are bounded at 256 (more get 503 with Retry-After) and each image request waits 60 s at
    /// most (then 504).
    public var pipeline = Self.defaultPipeline
    /// Refuse to start when the disk cache directory cannot be used (default false: run without it, with a warning).
    public var requiresDiskCache = false
    /// `Cache-Control: public, max-age=N` on images.
    public var maxAgeSeconds = 86_400
    /// A connection idle this long (a stalled or slow client) is closed (default 30 s).
    public var idleTimeout: Duration = .seconds(30)
    /// How long a request's body and an answer's sending may take, and how many connections may be open.
    public var connectionLimits = ConnectionLimits()
    /// The favourites database: SQLite beside the cache by default, or PostgreSQL for a fleet.
    public var database: FavoritesDatabase
    /// How long a favourites call waits for PostgreSQL (a connection and the answer) before it is answered 503.
    public var databaseCallTimeout: Duration = .seconds(3)
    /// Warm every catalogue image in the background at start.
    public var prefetchAtStart = false
    /// Append the URL of every image request to this file (an access trace for `tilecache bench-cache --trace`).
    public var traceFile: String?
    /// With a signer, image URLs with processing options must carry a valid `sig` (403 otherwise); nil: open.
    public var signer: URLSigner?
    /// The widths (after `dpr`) variants may have; others are 400 `width-not-allowed`. Nil: any width.
    public var allowedWidths: Set<Int>?
    /// The qualities `q` may name when `allowedWidths` is set; empty: only the default quality.
    public var allowedQualities: Set<Int> = []
    /// Named option sets URLs may name with `preset=NAME` (imgproxy's presets): a name to its options as a query
    /// (`w=128&format=webp`); see `presets(parsing:)`.
    public var presets: [String: String] = [:]
    /// Only presets may be named in URLs (imgproxy's `IMGPROXY_ONLY_PRESETS`).
    public var onlyPresets = false
    /// The source URLs imgproxy-style URLs may name (`--allowed-sources`); none: those URLs are not served.
    public var allowedSources = AllowedSources.none
    /// Whether open sources may lead to loopback, private, link-local and other restricted addresses
    /// (`--allow-private-sources`; default false: `AddressRule.publicOnly` on every connection).
    public var allowsPrivateSources = false
    /// imgproxy's `IMGPROXY_AUTO_WEBP`: an imgproxy URL that names no format answers WebP to a client whose `Accept`
    /// names it (with `Vary: Accept`).
    public var autoWebP = false
    /// imgproxy's `IMGPROXY_AUTO_AVIF`: a URL that names no format answers AVIF to a client whose `Accept` names it
    /// (before WebP), on imgproxy URLs and the catalogue's routes alike (with `Vary: Accept`). Off by default, as
    /// imgproxy's: an AVIF encode costs several times a WebP's.
    public var autoAVIF = false
    /// imgproxy's `IMGPROXY_ENABLE_CLIENT_HINTS`: image URLs that leave the width or dpr open take them from the
    /// request's client hints (`ClientHints`), within the allow-lists; image answers and the web page send `Accept-CH`
    /// and image answers vary by the hints. Off by default.
    public var clientHints = false
    /// Whether the element API's records carry their thumbnail's placeholder (`thumbnail_blurhash`, ...; default on).
    /// Off, a list loads no image and the records have the keys they had before placeholders.
    public var elementPlaceholders = true
    /// thumbor's `SECURITY_KEY` (its bytes, as thumbor takes it): thumbor URLs signed with it are served.
    public var thumborKey: [UInt8]?
    /// thumbor's `ALLOW_UNSAFE_URL`: `/unsafe/...` thumbor URLs are served (default false).
    public var allowsUnsafeThumborURLs = false

    /// Reads `--presets` (`thumb:w=128&format=webp,card:w=512&q=80`), checking every preset's options.
    ///
    /// - Throws: `ServiceConfigurationError` naming the entry and what is wrong with it.
    public static func presets(parsing text: String) throws(ServiceConfigurationError) -> [String: String] {
        try VariantRules.presets(parsing: text).mapValues { $0.items.map { "\($0.name)=\($0.value)" }.joined(separator: "&") }
    }

    /// The service's address as clients reach it (`https://tiles.example.com`, or with a path prefix behind a proxy),
    /// from which the JSON's absolute URLs (`thumbnail_url`, `image_url`) are made. Nil: those URLs are paths
    /// (`/api/v1/elements/26/thumbnail`), never made from the request's `Host`, which a client chooses: behind a shared
    /// cache one request with `Host: evil.example` would otherwise set the URLs every client gets.
    public var publicURL: String?

    /// The origin of `publicURL` (`https://tiles.example.com`, without its path), as a browser names pages under it.
    var publicOrigin: String? {
        guard let publicURL, let components = URLComponents(string: publicURL), let scheme = components.scheme,
              let host = components.host else { return nil }
        return scheme.lowercased() + "://" + (components.port.map { URLAuthority.string(host: host, port: $0) } ?? host).lowercased()
    }

    /// The proxies whose `X-Forwarded-Host` and `-Proto` make the JSON's absolute URLs when `publicURL` is not
    /// given; from other peers those headers are removed.
    public var trustedProxies = TrustedProxies.none

    /// `url` when it can be `--public-url`: `http` or `https`, a host, an optional port and path, no query, fragment
    /// or user; a trailing `/` is dropped.
    ///
    /// - Throws: `ServiceConfigurationError` naming the value and what is wrong with it.
    public static func publicURL(parsing url: String) throws(ServiceConfigurationError) -> String {
        var text = url.trimmingCharacters(in: .whitespaces)
        while text.hasSuffix("/") { text.removeLast() }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              ["http", "https"].contains(scheme), let host = components.host, !host.isEmpty,
              components.query == nil, components.fragment == nil, components.user == nil, components.password == nil else {
            throw ServiceConfigurationError("--public-url: '\(url)' is not a URL the service can be reached at (http or https://host[:port][/path], no query)")
        }
        return text
    }

    /// With a token, POST, PUT, PATCH and DELETE need `Authorization: Bearer <token>` (401 otherwise); nil: writes are
    /// open, as the seed's mock API was.
    public var writeToken: String?
    /// Which pages on other origins may call the service from a browser (default: any may read).
    public var cors = CORSPolicy.readOnlyForAll
    /// Log one line per request (method, path, status, bytes, duration, cache layer, request ID) at info.
    public var logRequests = false
    /// Answer requests for images in the memory tier on the connection's event loop, before the router (plain HTTP/1;
    /// see `CachedImageFastPath`). Off: every request goes through the router (`--no-fast-path`, for comparison).
    public var fastPath = true
    /// Serve HTTPS (HTTP/1.1 and HTTP/2 by ALPN) with this certificate chain and key, both PEM files; nil: plain HTTP.
    public var tls: TLSFiles?

    /// The defaults, with the favourites database beside the default cache directory.
    public init() {
        database = .sqlite(path: Self.defaultDatabasePath(cacheDirectory: DiskCache.defaultDirectory))
    }

    /// The pipeline defaults of a service (see `pipeline`).
    public static var defaultPipeline: ImagePipeline.Configuration {
        var pipeline = ImagePipeline.Configuration()
        pipeline.memoryContent = .encoded
        pipeline.memoryCountLimit = defaultMemoryCount
        pipeline.memoryCostLimit = defaultMemoryBytes
        pipeline.maxPendingLoads = 256
        pipeline.maxQueuedProcessing = 64
        pipeline.requestTimeout = .seconds(60)
        return pipeline
    }

    /// Most entries in a service's memory tier by default.
    public static let defaultMemoryCount = 100_000
    /// Most encoded bytes in a service's memory tier by default (64 MiB).
    public static let defaultMemoryBytes = 64 * 1024 * 1024

    /// `favorites.sqlite` in the cache directory's parent (beside the cache, never inside it).
    public static func defaultDatabasePath(cacheDirectory: String) -> String {
        let parent = LocalDirectory.parent(of: cacheDirectory)
        return (parent.isEmpty ? "" : parent + "/") + "favorites.sqlite"
    }
}

/// A PEM certificate chain and its private key.
public struct TLSFiles: Sendable, Equatable {
    public var certificateChain: String
    public var privateKey: String
    public init(certificateChain: String, privateKey: String) {
        self.certificateChain = certificateChain
        self.privateKey = privateKey
    }
}

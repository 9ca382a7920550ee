import Catalogue
import Foundation
import ImageCore

/// Everything `tilecache serve` is configured with.
public struct ServiceConfiguration: Sendable {
    /// Address to bind.
    public var host = "127.0.0.1"
    /// Port to bind (0 picks a free one).
    public var port = 8080
    /// Where catalogue images are fetched from.
    public var builder = ImageURLBuilder()
    /// Caches, downloader and validation.
    public var pipeline = ImagePipeline.Configuration()
    /// Refuse to start when the disk cache directory cannot be used (default false: run without it, with a warning).
    public var requiresDiskCache = false
    /// `Cache-Control: public, max-age=N` on images.
    public var maxAgeSeconds = 86_400
    /// Memory for hot images' encoded bytes and resized variants (default 64 MiB).
    public var encodedCacheBytes = 64 * 1024 * 1024
    /// Image loads that may wait for upstream at once; more get 503 with Retry-After (default 256).
    public var maxPendingLoads = 256
    /// Longest a client waits for an image (upstream included) before a 504 (default 60 s).
    public var requestTimeout: Duration = .seconds(60)
    /// A connection idle this long (a stalled or slow client) is closed (default 30 s).
    public var idleTimeout: Duration = .seconds(30)
    /// The favourites database (SQLite), beside the cache by default.
    public var databasePath: String
    /// Warm every catalogue image in the background at start.
    public var prefetchAtStart = false
    /// Append the URL of every image request to this file (an access trace for `tilecache bench-cache --trace`).
    public var traceFile: String?

    /// The defaults, with the favourites database beside the default cache directory.
    public init() {
        databasePath = Self.defaultDatabasePath(cacheDirectory: DiskCache.defaultDirectory)
    }

    /// `favorites.sqlite` in the cache directory's parent (beside the cache, never inside it).
    public static func defaultDatabasePath(cacheDirectory: String) -> String {
        let parent = (cacheDirectory as NSString).deletingLastPathComponent
        return (parent.isEmpty ? "" : parent + "/") + "favorites.sqlite"
    }
}

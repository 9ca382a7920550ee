/// One image wanted: where it lives, what to do to it, and which caches may answer.
///
/// Its keys (memory, disk, shared store, ETag, coalescing) derive from it in one place, `ImageKeys.swift`.
public struct ImageRequest: Sendable, Hashable {
    /// Which layers a request may read and write. The default uses them all.
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Go to the network even when memory or disk holds the image (and ignore remembered aliases): a check of
        /// what the host serves now, as `tilecache validate` makes.
        public static let reloadIgnoringCachedData = Options(rawValue: 1 << 0)
        /// Store nothing in memory.
        public static let disableMemoryCacheWrites = Options(rawValue: 1 << 1)
        /// Store nothing on disk (nor remember an alias there).
        public static let disableDiskCacheWrites = Options(rawValue: 1 << 2)
        /// Return decoded pixels in `ImageResponse.image` even when the memory tier holds encoded bytes (they are
        /// decoded for this request).
        public static let returnPixels = Options(rawValue: 1 << 3)

        /// Answer from the caches only: never the network (a stale disk entry is returned as it is, not revalidated).
        /// A miss fails with `.notCached`.
        public static let returnCacheDataDontLoad = Options(rawValue: 1 << 4)

        /// Read nothing from the caches, write nothing to them: only fetch and validate.
        public static let noStore: Options = [.reloadIgnoringCachedData, .disableMemoryCacheWrites, .disableDiskCacheWrites]
    }

    /// The image's URL.
    public var url: String
    /// Other URLs of the same image (another spelling of a name), tried in order when the host has none at `url`
    /// (404 or 410). The one that works is remembered and tried first next time.
    public var alternatives: [String]
    /// What to make of the source.
    public var processing: ImageProcessing
    /// Which caches may answer and be written.
    public var options: Options
    /// Which addresses fetching it may connect to: `.publicOnly` for a URL a service's client named (an open source),
    /// `.any` for the catalogue's and a user's own URLs.
    public var addresses: AddressRule

    /// A request for the image at `url`.
    public init(url: String, alternatives: [String] = [], processing: ImageProcessing = .none, options: Options = [],
                addresses: AddressRule = .any) {
        self.url = url
        self.addresses = addresses
        self.alternatives = alternatives
        self.processing = processing
        self.options = options
    }

    /// The same request for the unprocessed source.
    public var original: ImageRequest {
        var copy = self
        copy.processing = .none
        return copy
    }

    /// The same request for the placeholder of what it asks for (`ImageProcessing.placeholder(of:)`).
    public var placeholder: ImageRequest {
        var copy = self
        copy.processing = .placeholder(of: processing)
        return copy
    }
}

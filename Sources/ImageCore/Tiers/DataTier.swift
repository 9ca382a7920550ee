public import Logging

/// A store of images below the memory tier that loading an original walks, in order, before the network: the local
/// disk (`DiskCache`), a fleet's shared store (`SharedTier`), and later others. Variants are kept in the same tiers
/// under their own keys (`ImageKey`).
///
/// Thread-safety: every method may be called from any task, and a tier does its own I/O where it does not block the
/// caller (the disk on the blocking pool, the shared store over the network). A failure to read is a miss, counted
/// and logged by the tier; a read never throws.
public protocol DataTier: AnyObject, Sendable {
    /// How a hit here is reported (`.diskHit`, `.sharedHit`).
    var hitOutcome: ImageOutcome { get }
    /// Whether this machine validated everything the tier holds before storing it (the local disk): then a hit is
    /// served as it is. Otherwise (a shared store other machines write) a hit is decoded before it is used or written
    /// to the tiers above it.
    var holdsValidatedImages: Bool { get }

    /// The entry stored under `key`, verified (checksum, URL), or nil. `decode` is run on the entry in the same trip
    /// to the tier's I/O thread when the tier has one, and its result returned with the entry (the pipeline asks for it
    /// when it wants pixels of a fresh entry).
    func entry(for key: ImageKey, decode: (@Sendable (DiskCacheEntry) -> ValidatedImage?)?) async -> TierHit?

    /// Stores validated bytes under `key` (replacing what is there, also after a 304 refreshed the metadata); returns
    /// why nothing was stored, for the response's warnings, or nil. A tier that writes in the background (the shared
    /// store) queues the write and returns nil: it never fails a request.
    func store(_ bytes: [UInt8], metadata: DiskCacheMetadata, for key: ImageKey) async -> String?

    /// Removes `key`'s entry: upstream says the image is gone, or it no longer decodes. A tier that replaces entries
    /// only by writing (the shared store) does nothing.
    func remove(_ key: ImageKey) async

    /// Waits until every write the tier has accepted is made (the shared store's queue; immediate for the others).
    func drain() async
}

extension DataTier {
    public func remove(_ key: ImageKey) async {}
    public func drain() async {}
}

/// What a tier found: the verified entry, and the image decoded from it when asked and done in the same trip.
public struct TierHit: Sendable {
    public var entry: DiskCacheEntry
    public var validated: ValidatedImage?

    public init(entry: DiskCacheEntry, validated: ValidatedImage? = nil) {
        self.entry = entry
        self.validated = validated
    }
}

/// A data tier the pipeline makes when it is built, over the pipeline's own transfer engine (its connection pool) and
/// logger: how a tier defined in another module (the shared store) joins the pipeline's tiers after the local disk.
public struct DataTierFactory: Sendable {
    /// What the tier is made from, for whoever configured it to read back (a `SharedStoreConfiguration`).
    public let settings: any Sendable
    public let make: @Sendable (TransferEngine, Logger) -> any DataTier

    public init(settings: any Sendable, make: @escaping @Sendable (TransferEngine, Logger) -> any DataTier) {
        self.settings = settings
        self.make = make
    }
}

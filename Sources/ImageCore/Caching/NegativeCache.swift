public import Foundation
import Logging

/// An answer upstream gave that there is no image at a URL (404 or 410), remembered until `until`.
public struct KnownMissing: Sendable, Hashable {
    /// The status upstream answered (404 or 410).
    public var status: Int
    /// The failure's message as it was first reported (`HTTP 404 Not Found`).
    public var message: String
    /// When upstream answered.
    public var storedAt: Date
    /// When it stops being remembered.
    public var until: Date

    public init(status: Int, message: String, storedAt: Date, until: Date) {
        self.status = status
        self.message = message
        self.storedAt = storedAt
        self.until = until
    }

    /// The failure a request for `url` gets while this is remembered: the first answer's status and message, and how
    /// old it is, marked `isRemembered`.
    func error(for url: String, now: Date) -> ImageCoreError {
        let age = max(0, Int(now.timeIntervalSince(storedAt))), left = max(1, Int(until.timeIntervalSince(now).rounded(.up)))
        var error = ImageCoreError(.httpStatus, subject: url, message: """
            \(message) (upstream's answer \(age) s ago, remembered \(left) s more)
            """, httpStatus: status)
        error.isRemembered = true
        return error
    }
}

/// Negative caching: an image upstream said is not there (404 or 410) is not asked for again while the answer is
/// remembered, as browsers and CDNs keep such answers (RFC 9111 lets a cache keep a 404 or 410 heuristically). The
/// answer is remembered for what upstream's headers say (`Cache-Control` s-maxage or max-age, else `Expires`), at most
/// `maximumLifetime`; for `ImagePipeline.Configuration.negativeLifetime` when they say nothing; never when they forbid
/// keeping it (no-store, no-cache, max-age=0) or the configured lifetime is 0.
///
/// In this process's memory (the most recent `memoryCountLimit` answers), and in the disk cache's index for every
/// process using the directory (a prefetch run again a minute later asks nothing it was told is missing). A reload
/// asks upstream again and forgets the answer when the image is there. Thread-safety: any task may call it.
final class NegativeCache: Sendable {
    /// The longest an answer is remembered, whatever upstream says: a day.
    static let maximumLifetime = 24 * 3600
    /// Answers kept in memory.
    static let memoryCountLimit = 10_000

    private let memory = MemoryCache<String, KnownMissing>(countLimit: memoryCountLimit, costLimit: memoryCountLimit)
    private let disk: DiskCache?
    /// Seconds an answer is remembered when upstream's headers say nothing; 0 turns negative caching off.
    private let defaultLifetime: Int
    private let logger: Logger

    init(disk: DiskCache?, defaultLifetime: Duration, logger: Logger) {
        self.disk = disk
        self.defaultLifetime = max(0, Int(defaultLifetime.components.seconds))
        self.logger = logger
    }

    /// Whether answers are remembered at all.
    var isEnabled: Bool { defaultLifetime > 0 }

    /// The answer remembered for `key` and not yet expired: this process's, else the disk cache's.
    func answer(for key: ImageKey, now: Date = Date()) async -> KnownMissing? {
        guard isEnabled else { return nil }
        if let known = memory.value(forKey: key.cacheKey) {
            if known.until > now { return known }
            _ = memory.removeValue(forKey: key.cacheKey)
            return nil
        }
        guard let disk, let stored = await disk.knownMissing(key.cacheKey, now: now) else { return nil }
        _ = memory.set(stored, forKey: key.cacheKey, cost: 1)
        return stored
    }

    /// Remembers `error` (a 404 or 410) for `key`, for as long as upstream's headers and the configuration allow; in
    /// the disk cache too when `persist`.
    func remember(_ error: ImageCoreError, for key: ImageKey, persist: Bool, now: Date = Date()) async {
        guard isEnabled, error.isNotFound, !error.isRemembered, let status = error.httpStatus else { return }
        let lifetime = min(error.upstreamMaxAge ?? defaultLifetime, Self.maximumLifetime)
        guard lifetime > 0 else { return }
        let known = KnownMissing(status: status, message: error.message, storedAt: now, until: now.addingTimeInterval(Double(lifetime)))
        _ = memory.set(known, forKey: key.cacheKey, cost: 1)
        guard persist, let disk else { return }
        do {
            try await disk.rememberKnownMissing(known, for: key.cacheKey)
        } catch {
            logger.warning("could not remember a missing image in the disk cache", metadata: ["url": "\(key.url)", "reason": "\(error.message)"])
        }
    }

    /// Forgets what is remembered for `key` (the image was found after all), in the disk cache too when `persist`.
    func forget(_ key: ImageKey, persist: Bool) async {
        guard isEnabled else { return }
        _ = memory.removeValue(forKey: key.cacheKey)
        guard persist, let disk else { return }
        await disk.forgetKnownMissing(key.cacheKey)
    }

    /// How long upstream's headers let its answer be kept, in seconds: `Cache-Control`'s s-maxage, else max-age (0
    /// for no-store or no-cache), else `Expires` less `Date` (an `Expires` that is no date is in the past: 0); nil
    /// when they say nothing.
    static func upstreamMaxAge(of headers: HTTPHeaders, now: Date = Date()) -> Int? {
        if let seconds = DiskCacheMetadata.maxAge(fromCacheControl: headers["Cache-Control"]) { return seconds }
        guard let expires = headers["Expires"] else { return nil }
        guard let expiry = HTTPDate.date(from: expires) else { return 0 }
        let date = headers["Date"].flatMap { HTTPDate.date(from: $0) } ?? now
        return max(0, Int(expiry.timeIntervalSince(date)))
    }
}

import Catalogue
import Foundation
import ImageCore
import Logging
import NIOCore
import NIOConcurrencyHelpers

/// Bytes ready to send: an original image or a resized variant.
public struct ServedImage: Sendable {
    /// The encoded bytes, kept as the buffer responses send, so serving one shares its storage instead of copying.
    public var body: ByteBuffer
    /// `image/jpeg` or `image/png`.
    public var contentType: String
    /// A strong ETag derived from the bytes' SHA-256 (and the width, for variants).
    public var etag: String
    /// An HTTP date: upstream's Last-Modified, else when the bytes were stored.
    public var lastModified: String
    /// Where the bytes came from: `memory` (this store's byte cache), or the pipeline's outcome.
    public var source: String
}

/// Serves catalogue images from a byte LRU, then the pipeline (disk, network); makes and caches resized variants.
///
/// Hot images' encoded bytes stay in memory (an LRU bounded in bytes), so a cached image is served without disk I/O,
/// decoding or re-encoding. Concurrent misses for one image share one load (and one upstream request). Misses waiting
/// for upstream are bounded: past `maxPendingLoads`, requests fail at once with 503. Thread-safety: any task.
public final class ImageStore: Sendable {
    let pipeline: ImagePipeline
    let builder: ImageURLBuilder
    let bytesCache: MemoryCache<String, ServedImage>
    let maxPendingLoads: Int
    let requestTimeout: Duration
    let metrics: ServiceMetrics
    private let loads = TaskCoalescer<String, ServedImage>()
    private let pending = NIOLockedValueBox(0)
    private let shared = NIOLockedValueBox(SharedLoads())
    /// Elements whose photo the photo host answered 404 for, under every spelling, at the last try.
    private let missingPhotos = NIOLockedValueBox(Set<Int>())
    private let logger: Logger

    init(pipeline: ImagePipeline, builder: ImageURLBuilder, byteLimit: Int, maxPendingLoads: Int, requestTimeout: Duration,
         metrics: ServiceMetrics, logger: Logger) {
        self.requestTimeout = requestTimeout
        self.pipeline = pipeline
        self.builder = builder
        bytesCache = MemoryCache(countLimit: 100_000, costLimit: max(1, byteLimit))
        self.maxPendingLoads = maxPendingLoads
        self.metrics = metrics
        self.logger = logger
    }

    /// Requests answered by a load another request had started (their outcome is counted once, by that load).
    public struct SharedLoads: Sendable, Equatable, Encodable {
        /// Requests that got the shared load's image.
        public var succeeded = 0
        /// Requests that got the shared load's failure (an upstream 404, 502 or 504, or a 500 when resizing failed).
        public var failed = 0
    }

    /// Requests that shared another request's load so far.
    public var sharedLoads: SharedLoads { shared.withLockedValue { $0 } }

    /// Whether the photo host's last answer for `element`'s photo was 404 (or 410) under every spelling.
    public func lacksPhoto(_ element: Element) -> Bool { missingPhotos.withLockedValue { $0.contains(element.number) } }

    /// Records what a load of `element`'s photo said about the photo host (also loads outside this store: the start-up
    /// prefetch): success means it has the photo, 404 or 410 under every spelling that it has none; any other failure
    /// says nothing.
    public func notePhoto(of element: Element, after error: ImageCoreError?) {
        guard let error else {
            missingPhotos.withLockedValue { _ = $0.remove(element.number) }
            return
        }
        if error.isNotFound { missingPhotos.withLockedValue { _ = $0.insert(element.number) } }
    }

    /// The image of `element` of `kind`, resized to `width` when given. A photo the host lacks under the catalogue's
    /// spelling is tried under the name's other spellings (`caesium.jpg` for Cesium).
    public func image(_ element: Element, kind: ImageKind, width: Int?) async throws(ServiceError) -> ServedImage {
        if kind == .full, element.hasKnownMissingPhoto {
            metrics.cacheLookup(layer: "known-missing")
            throw ServiceError(.notFound, reason: "no-photo", message: "there is no full-size photo of \(element.name)")
        }
        let url = builder.url(for: element, kind: kind)
        let key = width.map { "\(url)#w=\($0)" } ?? url
        if let cached = bytesCache.value(forKey: key) {
            metrics.cacheLookup(layer: "memory")
            var hit = cached
            hit.source = "memory"
            return hit
        }
        let admitted = pending.withLockedValue { count -> Bool in
            guard count < maxPendingLoads else { return false }
            count += 1
            return true
        }
        guard admitted else {
            metrics.rejected()
            throw ServiceError(.serviceUnavailable, reason: "overloaded", message: "too many images are being fetched; retry shortly",
                               headers: [.retryAfter: "1"])
        }
        defer { pending.withLockedValue { $0 -= 1 } }
        do {
            // The caller stops waiting at the deadline; the shared load goes on for other callers (or the cache).
            return try await withThrowingTaskGroup(of: ServedImage.self) { group in
                group.addTask { [self] in
                    // `loads` runs only the first caller's operation, so `led` tells whether this request's load ran,
                    // for failures as well as successes.
                    let led = NIOLockedValueBox(false)
                    do {
                        let image = try await loads.run(key) { [self] in
                            led.withLockedValue { $0 = true }
                            return try await load(element, kind: kind, url: url, width: width, key: key)
                        }.0
                        if !led.withLockedValue({ $0 }) { recordShared(failed: false) }
                        return image
                    } catch let error as ServiceError {
                        if !led.withLockedValue({ $0 }) { recordShared(failed: true) }
                        throw error
                    }
                }
                group.addTask { [requestTimeout] in
                    try await Task.sleep(for: requestTimeout)
                    throw ServiceError(.gatewayTimeout, reason: "timeout", message: "the image was not ready in time")
                }
                defer { group.cancelAll() }
                return try await group.next()!
            }
        } catch let error as ServiceError {
            throw error
        } catch {
            throw ServiceError(.serviceUnavailable, reason: "cancelled", message: "the request was cancelled")
        }
    }

    private func recordShared(failed: Bool) {
        shared.withLockedValue { failed ? ($0.failed += 1) : ($0.succeeded += 1) }
        metrics.sharedLoad(failed: failed)
    }

    private func load(_ element: Element, kind: ImageKind, url: String, width: Int?, key: String) async throws(ServiceError) -> ServedImage {
        let original: EncodedImage
        do {
            original = try await pipeline.encodedImage(for: url, alternatives: kind == .full ? builder.otherPhotoURLs(for: element) : [])
            if kind == .full { notePhoto(of: element, after: nil) }
        } catch {
            if kind == .full { notePhoto(of: element, after: error) }
            metrics.upstreamFailure(reason: error.reason.rawValue)
            logger.warning("upstream image failed", metadata: ["url": "\(url)", "reason": "\(error.reason.rawValue)", "message": "\(error.message)"])
            throw ServiceError.upstream(error)
        }
        metrics.cacheLookup(layer: original.outcome.rawValue)
        if original.bytesDownloaded > 0 { metrics.upstreamBytes(original.bytesDownloaded) }
        let lastModified = original.metadata.lastModified ?? HTTPDate.string(from: original.metadata.storedAt)
        let etagBase = String(original.metadata.checksum.prefix(32))
        var served = ServedImage(body: ByteBuffer(bytes: original.bytes), contentType: original.metadata.format.mimeType,
                                 etag: "\"\(etagBase)\"", lastModified: lastModified, source: original.outcome.rawValue)
        if let width {
            do {
                let resized = try ImageResizer.resizedJPEG(original.bytes, width: width, subject: url)
                served = ServedImage(body: ByteBuffer(bytes: resized.bytes), contentType: "image/jpeg", etag: "\"\(etagBase)-w\(width)\"",
                                     lastModified: lastModified, source: "resized")
            } catch {
                logger.error("resize failed", metadata: ["url": "\(url)", "width": "\(width)", "message": "\(error.message)"])
                throw ServiceError(.internalServerError, reason: "resize-failed", message: "the image could not be resized")
            }
        }
        bytesCache.set(served, forKey: key, cost: served.body.readableBytes)
        return served
    }
}

/// HTTP dates (RFC 9110 IMF-fixdate).
enum HTTPDate {
    private static let formatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }()
    private static let lock = NIOLockedValueBox(())

    static func string(from date: Date) -> String { lock.withLockedValue { _ in formatter.string(from: date) } }
    static func date(from string: String) -> Date? { lock.withLockedValue { _ in formatter.date(from: string) } }
}

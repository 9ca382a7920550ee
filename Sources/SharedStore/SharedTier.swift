public import ImageCore
import DequeModule
import Foundation
import Histogram
public import Logging
import NIOConcurrencyHelpers

/// The shared cache tier: validated images (and resized variants) in an S3 bucket that every instance of a fleet
/// reads and writes, between the local disk and the origin.
///
/// - Reads verify each object's SHA-256 (`x-amz-meta-sha256`) and URL: a mismatch is a miss, counted as `corrupt`,
///   and the pipeline's next fetch replaces the object.
/// - Writes go through a bounded queue drained in the background (`writeConcurrency` at once); a full queue drops the
///   write and counts it; a failed write is logged and counted. Neither ever fails an image request. `drain()` waits
///   for the queue (a prefetch does before it reports).
/// - A circuit breaker: after `failureThreshold` consecutive failures (refused, timed out, 5xx, 403) the tier is
///   skipped, and the bucket is probed every `probeInterval` until it answers; then it is used again.
///
/// Thread-safety: every method may be called from any task.
public final class SharedTier: Sendable {
    /// Where the tier lives and its limits.
    public let configuration: SharedStoreConfiguration
    let client: S3Client
    private let logger: Logger
    private let state = NIOLockedValueBox(State())

    /// A write waiting for the store.
    struct Write: Sendable {
        var name: String
        var bytes: [UInt8]
        var metadata: DiskCacheMetadata
        var originContentType: String?
    }

    private struct State {
        var consecutiveFailures = 0
        /// Set while the circuit is open: why, and since when.
        var open: (reason: String, since: Date)?
        var probing = false
        /// Whether a probe that finds the bucket missing may create it (`--create-bucket` at start).
        var createsBucket = false
        var statistics = SharedTierStatistics()
        var latency = Histogram<UInt64>(highestTrackableValue: 3_600_000_000, numberOfSignificantValueDigits: .three)
        var queue = Deque<Write>()
        var writers = 0
        var drained: [CheckedContinuation<Void, Never>] = []
    }

    /// A tier over `engine` (the pipeline's, so the store shares its connection pool). Nothing is sent until
    /// `checkBucket` or the first read.
    public init(configuration: SharedStoreConfiguration, engine: TransferEngine, logger: Logger) {
        self.configuration = configuration
        client = S3Client(configuration: configuration, engine: engine)
        self.logger = logger
    }

    /// Checks the bucket, what a command does at start. A store that does not answer is not misconfiguration: the
    /// tier starts degraded (logged once, shown by `health`) and is used as soon as a probe succeeds.
    ///
    /// - Parameter createBucket: create the bucket when it does not exist (otherwise that is an error).
    /// - Throws: `SharedStoreError` naming the store and endpoint: `.bucketMissing`, `.forbidden` (wrong
    ///   credentials), `.unexpected` (any other answer).
    public func checkBucket(createBucket: Bool = false) async throws(SharedStoreError) {
        let store = configuration.storeURL, endpoint = configuration.endpoint
        state.withLockedValue { $0.createsBucket = createBucket }
        let status: Int
        do {
            status = try await client.headBucket()
        } catch {
            startDegraded(reason: error.message)
            return
        }
        switch status {
        case 200:
            break
        case 404 where createBucket:
            do {
                try await client.createBucket()
            } catch {
                throw SharedStoreError(error.reason == "forbidden" ? .forbidden : .unexpected, store: store, endpoint: endpoint,
                                       message: "could not create bucket '\(configuration.bucket)': \(error.message)")
            }
            logger.info("created the shared store's bucket", metadata: ["store": "\(store)", "endpoint": "\(endpoint)"])
        case 404:
            throw SharedStoreError(.bucketMissing, store: store, endpoint: endpoint,
                                   message: "bucket '\(configuration.bucket)' does not exist (--create-bucket creates it)")
        case 401, 403:
            throw SharedStoreError(.forbidden, store: store, endpoint: endpoint,
                                   message: "access denied to bucket '\(configuration.bucket)' (HTTP \(status)): check \(SharedStoreConfiguration.Variable.accessKeyID) and \(SharedStoreConfiguration.Variable.secretAccessKey)")
        case 500...:
            startDegraded(reason: "HEAD bucket answered HTTP \(status)")
        default:
            throw SharedStoreError(.unexpected, store: store, endpoint: endpoint,
                                   message: "HEAD bucket '\(configuration.bucket)' answered HTTP \(status): is this an S3 endpoint?")
        }
    }

    private func startDegraded(reason: String) {
        logger.warning("the shared store does not answer: starting degraded (serving from local disk and the origin); probing it",
                       metadata: ["store": "\(configuration.storeURL)", "endpoint": "\(configuration.endpoint)", "reason": "\(reason)",
                                  "probeSeconds": "\(configuration.probeInterval.components.seconds)"])
        let startProbe = state.withLockedValue { state -> Bool in
            state.open = (reason, Date())
            defer { state.probing = true }
            return !state.probing
        }
        if startProbe { probe() }
    }

    // MARK: - Keys

    // MARK: - Reads

    /// What the tier holds under `name` for `url`, verified; nil for a miss, a damaged object, a failure (counted), or
    /// while the circuit is open.
    func entry(named name: String, url: String) async -> (entry: DiskCacheEntry, originContentType: String?)? {
        guard admits() else { return nil }
        let started = ContinuousClock.now
        let object: S3Client.Object?
        do {
            object = try await client.object(client.key(name))
        } catch {
            failed(error, after: started)
            return nil
        }
        succeeded(after: started) { statistics in
            if let object {
                statistics.hits += 1
                statistics.bytesRead += object.bytes.count
            } else {
                statistics.misses += 1
            }
        }
        guard let object else { return nil }
        guard let metadata = Self.metadata(from: object.headers, bytes: object.bytes), metadata.url == url else {
            state.withLockedValue { $0.statistics.corrupt += 1 }
            logger.warning("a shared object does not match its checksum or URL: treated as a miss, to be replaced",
                           metadata: ["store": "\(configuration.storeURL)", "key": "\(client.key(name))", "url": "\(url)"])
            return nil
        }
        return (DiskCacheEntry(metadata: metadata, bytes: object.bytes), object.headers["x-amz-meta-origin-content-type"])
    }

    // MARK: - Writes

    /// Queues a write of validated bytes under `name`. Dropped (and counted) when the queue is full or the circuit is
    /// open; never throws.
    func store(named name: String, bytes: [UInt8], metadata: DiskCacheMetadata) {
        let write = Write(name: name, bytes: bytes, metadata: metadata)
        let startWriter = state.withLockedValue { state -> Bool in
            guard state.open == nil, state.queue.count < configuration.writeQueueLimit else {
                state.statistics.writesDropped += 1
                return false
            }
            state.queue.append(write)
            guard state.writers < configuration.writeConcurrency else { return false }
            state.writers += 1
            return true
        }
        if startWriter { Task { await self.runWrites() } }
    }

    /// Waits until every queued write has been made (or has failed).
    public func drain() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLockedValue { state -> Bool in
                guard state.queue.isEmpty, state.writers == 0 else {
                    state.drained.append(continuation)
                    return false
                }
                return true
            }
            if idle { continuation.resume() }
        }
    }

    private func runWrites() async {
        while let write = nextWrite() {
            let started = ContinuousClock.now
            do {
                try await client.put(client.key(write.name), bytes: write.bytes, contentType: write.metadata.format.mimeType,
                                     metadata: Self.headers(for: write.metadata))
                succeeded(after: started) { statistics in
                    statistics.writes += 1
                    statistics.bytesWritten += write.bytes.count
                }
            } catch {
                state.withLockedValue { $0.statistics.writesFailed += 1 }
                failed(error, after: started)
                logger.warning("could not write to the shared store", metadata: [
                    "store": "\(configuration.storeURL)", "url": "\(write.metadata.url)", "reason": "\(error.message)"])
            }
        }
    }

    /// The next queued write; nil (and this writer retired, waking `drain` callers when the last one is) when none.
    private func nextWrite() -> Write? {
        let (write, waiters) = state.withLockedValue { state -> (Write?, [CheckedContinuation<Void, Never>]) in
            if state.open == nil, let write = state.queue.popFirst() { return (write, []) }
            // With the circuit open, what is queued is dropped: the store is not answering.
            state.statistics.writesDropped += state.queue.count
            state.queue.removeAll()
            state.writers -= 1
            guard state.writers == 0 else { return (nil, []) }
            defer { state.drained.removeAll() }
            return (nil, state.drained)
        }
        for waiter in waiters { waiter.resume() }
        return write
    }

    // MARK: - The circuit breaker

    /// Whether a request may go to the store now (false, counted as skipped, while the circuit is open).
    private func admits() -> Bool {
        state.withLockedValue { state in
            guard state.open == nil else {
                state.statistics.skipped += 1
                return false
            }
            return true
        }
    }

    private func succeeded(after started: ContinuousClock.Instant, _ update: (inout SharedTierStatistics) -> Void) {
        let elapsed = ContinuousClock.now - started
        state.withLockedValue { state in
            state.consecutiveFailures = 0
            state.statistics.requests += 1
            update(&state.statistics)
            Self.record(elapsed, in: &state)
        }
    }

    private func failed(_ failure: S3Client.Failure, after started: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - started
        let opened = state.withLockedValue { state -> Bool in
            state.statistics.requests += 1
            state.statistics.errors[failure.reason, default: 0] += 1
            Self.record(elapsed, in: &state)
            state.consecutiveFailures += 1
            guard state.open == nil, state.consecutiveFailures >= configuration.failureThreshold else { return false }
            state.open = (failure.message, Date())
            state.statistics.circuitOpened += 1
            defer { state.probing = true }
            return !state.probing
        }
        guard opened else { return }
        logger.warning("the shared store is failing: skipping it, serving from local disk and the origin; probing it", metadata: [
            "store": "\(configuration.storeURL)", "endpoint": "\(configuration.endpoint)", "reason": "\(failure.message)",
            "failures": "\(configuration.failureThreshold)", "probeSeconds": "\(configuration.probeInterval.components.seconds)"])
        probe()
    }

    /// Probes the bucket every `probeInterval` until it answers 200, then closes the circuit. Holds the tier weakly:
    /// a tier no longer used stops probing.
    private func probe() {
        let interval = configuration.probeInterval
        Task { [weak self] in
            while true {
                guard (try? await Task.sleep(for: interval)) != nil, let tier = self else { return }
                var status = try? await tier.client.headBucket()
                // A store that was down at start may come back without the bucket: create it if allowed at start.
                if status == 404, tier.state.withLockedValue({ $0.createsBucket }), (try? await tier.client.createBucket()) != nil {
                    tier.logger.info("created the shared store's bucket", metadata: ["store": "\(tier.configuration.storeURL)"])
                    status = 200
                }
                let recovered = tier.state.withLockedValue { state -> Bool in
                    guard status == 200 else {
                        if let status { state.open?.reason = "HEAD bucket answered HTTP \(status)" }
                        return false
                    }
                    state.open = nil
                    state.probing = false
                    state.consecutiveFailures = 0
                    return true
                }
                if recovered {
                    tier.logger.info("the shared store answers again: using it", metadata: ["store": "\(tier.configuration.storeURL)"])
                    return
                }
            }
        }
    }

    private static func record(_ elapsed: Duration, in state: inout State) {
        let (seconds, attoseconds) = elapsed.components
        let microseconds = UInt64(max(0, seconds)) * 1_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000_000)
        _ = state.latency.record(min(microseconds, 3_600_000_000))
    }

    // MARK: - Reporting

    /// The tier's state, for `/healthz` and the start-up log.
    public var health: SharedTierHealth {
        state.withLockedValue { state in
            SharedTierHealth(status: state.open == nil ? .ok : .degraded, store: configuration.storeURL, endpoint: configuration.endpoint,
                             reason: state.open?.reason, since: state.open.map { HTTPDate.string(from: $0.since) })
        }
    }

    /// Counters since the tier was connected.
    public var statistics: SharedTierStatistics {
        state.withLockedValue { state in
            var statistics = state.statistics
            if state.latency.totalCount > 0 {
                func milliseconds(_ microseconds: UInt64) -> Double { Double(microseconds) / 1000 }
                statistics.latencyMilliseconds = LatencySummary(
                    count: Int(state.latency.totalCount), p50: milliseconds(state.latency.valueAtPercentile(50)),
                    p90: milliseconds(state.latency.valueAtPercentile(90)), p99: milliseconds(state.latency.valueAtPercentile(99)),
                    max: milliseconds(state.latency.max))
            }
            statistics.queued = state.queue.count
            return statistics
        }
    }

    /// Objects and bytes under the prefix (ListObjectsV2).
    ///
    /// - Throws: `SharedStoreError` naming the store when the listing fails.
    public func summary() async throws(SharedStoreError) -> (objects: Int, bytes: Int) {
        do {
            return try await client.summary()
        } catch {
            throw SharedStoreError(error.reason == "forbidden" ? .forbidden : .unexpected, store: configuration.storeURL,
                                   endpoint: configuration.endpoint, message: "could not list the objects: \(error.message)")
        }
    }

    // MARK: - Object metadata

    /// `x-amz-meta-*` fields for an object: URL, format, dimensions, SHA-256, stored-at, freshness and the origin's
    /// validators and content type. Values are ASCII (URLs are percent-encoded where they are not).
    static func headers(for metadata: DiskCacheMetadata) -> [(String, String)] {
        var fields = [("url", ascii(metadata.url)), ("format", metadata.format.rawValue), ("width", String(metadata.width)),
                      ("height", String(metadata.height)), ("sha256", metadata.checksum),
                      ("stored-at", String(Int(metadata.storedAt.timeIntervalSince1970)))]
        if let maxAge = metadata.maxAgeSeconds { fields.append(("max-age", String(maxAge))) }
        if let orientation = metadata.orientation { fields.append(("orientation", String(orientation))) }
        if let etag = metadata.etag { fields.append(("origin-etag", ascii(etag))) }
        if let lastModified = metadata.lastModified { fields.append(("origin-last-modified", ascii(lastModified))) }
        if let contentType = metadata.contentType { fields.append(("origin-content-type", ascii(contentType))) }
        return fields
    }

    /// The metadata an object's headers carry, checked against its bytes; nil when a field is missing or the bytes
    /// do not match the SHA-256.
    static func metadata(from headers: HTTPHeaders, bytes: [UInt8]) -> DiskCacheMetadata? {
        func field(_ name: String) -> String? { headers["x-amz-meta-\(name)"].flatMap { $0.removingPercentEncoding } }
        guard let url = field("url"), let format = field("format").flatMap(ImageFormat.init(rawValue:)),
              let width = field("width").flatMap({ Int($0) }), let height = field("height").flatMap({ Int($0) }),
              let checksum = headers["x-amz-meta-sha256"], let storedAt = field("stored-at").flatMap({ Double($0) }) else { return nil }
        let orientation = field("orientation").flatMap { Int($0) }.flatMap { (1...8).contains($0) ? $0 : nil }
        var metadata = DiskCacheMetadata(url: url, header: ImageHeader(format: format, width: width, height: height, byteCount: bytes.count,
                                                                        orientation: orientation),
                                         bytes: bytes, contentType: field("origin-content-type"), etag: field("origin-etag"),
                                         lastModified: field("origin-last-modified"), cacheControl: nil,
                                         storedAt: Date(timeIntervalSince1970: storedAt))
        metadata.maxAgeSeconds = field("max-age").flatMap { Int($0) }
        guard metadata.checksum == checksum.lowercased() else { return nil }
        return metadata
    }

    private static func ascii(_ text: String) -> String {
        text.allSatisfy { $0.isASCII && !$0.isNewline && $0 != "%" } ? text
            : (text.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(CharacterSet(charactersIn: "%"))) ?? "")
    }
}

/// The shared tier's state: `ok`, or `degraded` (skipped until a probe succeeds) with the reason and since when.
public struct SharedTierHealth: Sendable, Hashable, Codable {
    public enum Status: String, Sendable, Hashable, Codable { case ok, degraded }
    public var status: Status
    public var store: String
    public var endpoint: String
    /// Why the tier is skipped (the last failure), when degraded.
    public var reason: String?
    /// When it started being skipped (an HTTP date), when degraded.
    public var since: String?
}

/// What the shared tier did: requests to the store, hits, misses, damaged objects, requests skipped while the
/// circuit was open, writes made, failed and dropped, bytes each way, errors by reason, and latency.
public struct SharedTierStatistics: Sendable, Hashable, Codable {
    /// Requests sent to the store (reads and writes).
    public var requests = 0
    public var hits = 0
    public var misses = 0
    /// Objects whose bytes did not match their SHA-256 or URL (treated as misses, then replaced).
    public var corrupt = 0
    /// Reads not sent because the circuit was open.
    public var skipped = 0
    public var writes = 0
    public var writesFailed = 0
    /// Writes not made: the queue was full or the circuit open.
    public var writesDropped = 0
    /// Writes waiting now.
    public var queued = 0
    public var bytesRead = 0
    public var bytesWritten = 0
    /// Times the circuit opened.
    public var circuitOpened = 0
    /// Failed requests by reason (`connect`, `timeout`, `forbidden`, `http-5xx`, …).
    public var errors: [String: Int] = [:]
    /// Latency of the store's requests.
    public var latencyMilliseconds: LatencySummary?

    public init() {}
}

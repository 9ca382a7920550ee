public import NIOConcurrencyHelpers

/// A thread-safe memory cache with an exact count limit and an exact cost limit (bytes): least recently used by
/// default, or W-TinyLFU (`Policy.tinyLFU`: a small LRU window in front of a segmented LRU that admits only entries
/// asked for more often than what they would displace).
///
/// Like `NSCache` with `countLimit` and `totalCostLimit`, but exact: after `set` returns, neither limit is exceeded.
/// An entry whose cost alone is above the cost limit is not cached. Get, set and eviction are O(1).
/// Thread-safety: every method may be called from any task or thread at once; one lock serialises the short
/// critical sections (no work other than the bookkeeping runs under it).
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// Counters since creation (or the last `resetStatistics`).
    public struct Statistics: Sendable, Equatable, Codable {
        /// Lookups that found an entry.
        public var hits = 0
        /// Lookups that found nothing.
        public var misses = 0
        /// Entries stored.
        public var insertions = 0
        /// Entries dropped to respect a limit.
        public var evictions = 0
        /// Entries refused because their cost alone exceeds the cost limit.
        public var rejections = 0
        /// Entries held now.
        public var count = 0
        /// Total cost held now.
        public var totalCost = 0

        /// hits / (hits + misses), 0 when nothing was looked up.
        public var hitRate: Double { hits + misses == 0 ? 0 : Double(hits) / Double(hits + misses) }
    }

    /// How the cache chooses what to keep.
    public enum Policy: String, Sendable, CaseIterable, Codable {
        /// Least recently used goes first.
        case lru
        /// W-TinyLFU (Caffeine's policy): new entries pass through an LRU window (1% of the limits, or all of them
        /// while recency pays more); one leaving it displaces the main region's victim only if a frequency sketch has
        /// seen it more often.
        case tinyLFU = "tinylfu"
    }

    /// One engine or the other; both optional so each is mutated in place (an enum payload would be copied).
    @usableFromInline
    struct State: Sendable {
        @usableFromInline var store: LRUStore<Key, Value>?
        @usableFromInline var tinyLFU: TinyLFUStore<Key, Value>?
        @usableFromInline var statistics = Statistics()

        @inlinable
        init(policy: Policy, countLimit: Int, costLimit: Int) {
            switch policy {
            case .lru: store = LRUStore(countLimit: countLimit, costLimit: costLimit)
            case .tinyLFU: tinyLFU = TinyLFUStore(countLimit: countLimit, costLimit: costLimit)
            }
        }

        @inlinable var count: Int { store?.count ?? tinyLFU?.count ?? 0 }
        @inlinable var totalCost: Int { store?.totalCost ?? tinyLFU?.totalCost ?? 0 }
        @inlinable var countLimit: Int { store?.countLimit ?? tinyLFU?.countLimit ?? 0 }
        @inlinable var costLimit: Int { store?.costLimit ?? tinyLFU?.costLimit ?? 0 }

        @inlinable
        mutating func value(forKey key: Key) -> Value? {
            if store != nil { return store!.value(forKey: key) }
            return tinyLFU!.value(forKey: key)
        }

        @inlinable
        mutating func insert(_ value: Value, forKey key: Key, cost: Int) -> Int {
            if store != nil { return store!.insert(value, forKey: key, cost: cost) }
            return tinyLFU!.insert(value, forKey: key, cost: cost)
        }

        @inlinable
        @discardableResult
        mutating func removeValue(forKey key: Key) -> Value? {
            if store != nil { return store!.removeValue(forKey: key) }
            return tinyLFU!.removeValue(forKey: key)
        }

        @inlinable
        func contains(_ key: Key) -> Bool { store?.contains(key) ?? tinyLFU?.contains(key) ?? false }

        @inlinable
        mutating func removeAll() {
            if store != nil { store!.removeAll() } else { tinyLFU!.removeAll() }
        }

        @inlinable
        mutating func setLimits(countLimit: Int, costLimit: Int) -> Int {
            if store != nil { return store!.setLimits(countLimit: countLimit, costLimit: costLimit) }
            return tinyLFU!.setLimits(countLimit: countLimit, costLimit: costLimit)
        }

        @inlinable var keysByRecency: [Key] { store?.keysByRecency ?? tinyLFU?.keysByRecency ?? [] }
    }

    // Inlinable so callers in other modules (the service's byte cache, benchmarks) get code specialized for their
    // key and value types instead of generic dispatch on every hit.
    @usableFromInline let state: NIOLockedValueBox<State>

    /// The seed app's `NSCache` limits: 100 entries.
    public static var defaultCountLimit: Int { 100 }
    /// The seed app's `NSCache` limits: 10 MiB.
    public static var defaultCostLimit: Int { 10 * 1024 * 1024 }

    /// The policy it was made with.
    public let policy: Policy

    /// A cache holding at most `countLimit` entries and `costLimit` total cost (both > 0), keeping what `policy`
    /// chooses (least recently used goes first by default).
    public init(countLimit: Int = defaultCountLimit, costLimit: Int = defaultCostLimit, policy: Policy = .lru) {
        self.policy = policy
        state = NIOLockedValueBox(State(policy: policy, countLimit: countLimit, costLimit: costLimit))
    }

    /// The value for `key`, marking it most recently used; counts a hit or a miss.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        state.withLockedValue { state in
            if let value = state.value(forKey: key) {
                state.statistics.hits += 1
                return value
            }
            state.statistics.misses += 1
            return nil
        }
    }

    /// Stores `value` with `cost`, evicting least recently used entries until both limits hold.
    ///
    /// - Returns: false when the entry was refused because its cost exceeds the whole cost limit.
    @inlinable @discardableResult
    public func set(_ value: Value, forKey key: Key, cost: Int) -> Bool {
        state.withLockedValue { state in
            guard cost <= state.costLimit else {
                state.removeValue(forKey: key)
                state.statistics.rejections += 1
                return false
            }
            state.statistics.evictions += state.insert(value, forKey: key, cost: cost)
            state.statistics.insertions += 1
            return true
        }
    }

    /// Removes the entry for `key`, returning it.
    @inlinable @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        state.withLockedValue { $0.removeValue(forKey: key) }
    }

    /// Whether `key` is cached, without counting a lookup or touching recency.
    @inlinable
    public func contains(_ key: Key) -> Bool {
        state.withLockedValue { $0.contains(key) }
    }

    /// Removes every entry (statistics are kept).
    public func removeAll() {
        state.withLockedValue { $0.removeAll() }
    }

    /// Number of entries held.
    public var count: Int { state.withLockedValue { $0.count } }
    /// Total cost held.
    public var totalCost: Int { state.withLockedValue { $0.totalCost } }
    /// The count limit.
    public var countLimit: Int { state.withLockedValue { $0.countLimit } }
    /// The cost limit.
    public var costLimit: Int { state.withLockedValue { $0.costLimit } }

    /// Changes both limits, evicting at once as needed.
    public func setLimits(countLimit: Int, costLimit: Int) {
        state.withLockedValue { state in
            state.statistics.evictions += state.setLimits(countLimit: countLimit, costLimit: costLimit)
        }
    }

    /// Keys from most to least recently used (O(n); for tests and diagnostics). With TinyLFU: the window's, then
    /// probation's, then protected's, each in that order.
    public var keysByRecency: [Key] { state.withLockedValue { $0.keysByRecency } }

    /// A snapshot of the counters.
    public var statistics: Statistics {
        state.withLockedValue { state in
            var statistics = state.statistics
            statistics.count = state.count
            statistics.totalCost = state.totalCost
            return statistics
        }
    }

    /// Zeroes the counters (entries are kept).
    public func resetStatistics() {
        state.withLockedValue { $0.statistics = Statistics() }
    }
}

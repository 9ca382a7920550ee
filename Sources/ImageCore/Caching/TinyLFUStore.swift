/// W-TinyLFU (Einziger, Friedman and Manes, "TinyLFU: A Highly Efficient Cache Admission Policy", 2017), as Caffeine
/// runs it: new entries enter a small LRU *window*; an entry leaving the window is a *candidate* for the main region,
/// a segmented LRU (*probation*, then *protected* once hit again, 80% of the main region), and gets in only if a
/// frequency sketch says it has been asked for more often than the main region's eviction victim. One scan of
/// never-again-seen keys then passes through the window without flushing what is popular.
///
/// The window is 1% of the limits (Caffeine's start) while that pays, and the whole cache (plain LRU) while recency
/// pays more: `WindowTuner` decides by trying the other size now and then. Caffeine moves the window by hill climbing
/// instead, but on the periodic-table list scrolled up and down the hit rate is not a hill: at 25 entries a fixed
/// window of 1% gets 25.4%, 20% gets 21.2%, 50% 16.9%, 80% 44.3% and 100% (LRU) 46.0%, so a climber starting at 1%
/// never sees a step up (ours stayed at 22-25%).
///
/// The three regions are `LRUStore`s (the one list-and-slot engine); the count and cost limits hold exactly after
/// every call, as with the plain LRU. Not thread-safe: `MemoryCache` serialises access.
@usableFromInline
struct TinyLFUStore<Key: Hashable, Value> {
    @usableFromInline var window: LRUStore<Key, Value>
    @usableFromInline var probation: LRUStore<Key, Value>
    @usableFromInline var protected: LRUStore<Key, Value>
    @usableFromInline var sketch: FrequencySketch
    @usableFromInline private(set) var countLimit: Int
    @usableFromInline private(set) var costLimit: Int

    /// The protected segment's share of the main region (Caffeine's setting).
    @usableFromInline static var protectedShare: Double { 0.8 }
    /// The largest sketch made (counters for about a million keys: 8 MiB).
    @usableFromInline static var largestSketch: Int { 1 << 20 }

    /// The window's share of the limits, set by `tuner`.
    @usableFromInline var windowShare = WindowTuner.frequencyShare
    @usableFromInline var tuner = WindowTuner()

    @usableFromInline
    init(countLimit: Int, costLimit: Int) {
        precondition(countLimit > 0 && costLimit > 0, "cache limits must be positive")
        self.countLimit = countLimit
        self.costLimit = costLimit
        // The regions are bounded here, not by their own limits.
        window = LRUStore(countLimit: .max, costLimit: .max)
        probation = LRUStore(countLimit: .max, costLimit: .max)
        protected = LRUStore(countLimit: .max, costLimit: .max)
        // Sized for the count limit, or for 256 entries when only bytes limit the cache; it grows with the entries.
        sketch = FrequencySketch(expectedEntries: min(countLimit, 256))
    }

    @inlinable var count: Int { window.count + probation.count + protected.count }
    @inlinable var totalCost: Int { window.totalCost + probation.totalCost + protected.totalCost }

    @inlinable var windowCountLimit: Int { max(1, Self.portion(windowShare, of: countLimit)) }
    @inlinable var windowCostLimit: Int { max(1, Self.portion(windowShare, of: costLimit)) }
    @inlinable var protectedCountLimit: Int { max(1, Self.portion(Self.protectedShare, of: countLimit - windowCountLimit)) }
    @inlinable var protectedCostLimit: Int { max(1, Self.portion(Self.protectedShare, of: costLimit - windowCostLimit)) }

    /// `share` (0...1) of `limit`, rounded down; a limit of `Int.max` (none) stays out of `Double`'s rounding.
    @inlinable
    static func portion(_ share: Double, of limit: Int) -> Int {
        share >= 1 ? limit : Int(min(Double(limit) * share, Double(Int.max / 2)))
    }

    /// The value for `key`; every lookup, hit or miss, counts in the frequency sketch and in the tuner's sample (ten
    /// lookups per entry held). A hit in probation moves the entry to protected.
    @inlinable
    mutating func value(forKey key: Key) -> Value? {
        sketch.increment(key)
        let found = lookUp(key)
        if let share = tuner.record(hit: found != nil, sampleSize: 10 * max(1, min(countLimit, count))) {
            windowShare = share
        }
        return found
    }

    @inlinable
    mutating func lookUp(_ key: Key) -> Value? {
        if let value = window.value(forKey: key) { return value }
        if let value = protected.value(forKey: key) { return value }
        guard probation.contains(key), let cost = probation.cost(forKey: key), let value = probation.removeValue(forKey: key) else {
            return nil
        }
        protected.insert(value, forKey: key, cost: cost)
        // Protected over its share: its least recently used entries go back to probation (they are not evicted).
        while protected.count > protectedCountLimit || protected.totalCost > protectedCostLimit, protected.count > 1,
              let demoted = protected.removeLeastRecentlyUsed() {
            probation.insert(demoted.value, forKey: demoted.key, cost: demoted.cost)
        }
        return value
    }

    @inlinable
    func contains(_ key: Key) -> Bool { window.contains(key) || probation.contains(key) || protected.contains(key) }

    /// Stores `value` in the window (or updates it where it is), then lets the window's overflow compete for the main
    /// region until both limits hold. Returns the number of entries evicted.
    @inlinable
    @discardableResult
    mutating func insert(_ value: Value, forKey key: Key, cost: Int) -> Int {
        guard cost <= costLimit else {
            removeValue(forKey: key)
            return 0
        }
        if probation.contains(key) {
            probation.insert(value, forKey: key, cost: cost)
        } else if protected.contains(key) {
            protected.insert(value, forKey: key, cost: cost)
        } else {
            window.insert(value, forKey: key, cost: cost)
        }
        let evicted = trim()
        // A cache limited by bytes alone outgrew its sketch: a larger one (Caffeine also starts over when it grows).
        if count > sketch.expectedEntries, sketch.expectedEntries < Self.largestSketch {
            sketch = FrequencySketch(expectedEntries: min(2 * count, Self.largestSketch))
        }
        return evicted
    }

    @inlinable
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        window.removeValue(forKey: key) ?? probation.removeValue(forKey: key) ?? protected.removeValue(forKey: key)
    }

    @inlinable
    mutating func removeAll() {
        window.removeAll()
        probation.removeAll()
        protected.removeAll()
    }

    @inlinable
    @discardableResult
    mutating func setLimits(countLimit: Int, costLimit: Int) -> Int {
        precondition(countLimit > 0 && costLimit > 0, "cache limits must be positive")
        self.countLimit = countLimit
        self.costLimit = costLimit
        return trim()
    }

    /// Keys of the window, then probation, then protected, each from most to least recently used (diagnostics).
    @inlinable var keysByRecency: [Key] { window.keysByRecency + probation.keysByRecency + protected.keysByRecency }

    /// Moves the window's overflow out as candidates, then evicts until both limits hold: each round, the oldest
    /// candidate against the main region's eviction victim (probation's least recently used entry, else protected's);
    /// the one the sketch has seen less often goes, and on a tie the candidate goes (what is in stays). With no
    /// candidate left, the main region (then the window) gives up its least recently used entry. The candidates that
    /// won a place enter probation.
    @inlinable
    mutating func trim() -> Int {
        var candidates: [(key: Key, value: Value, cost: Int)] = []
        var candidateCost = 0
        while window.count > 1, window.count > windowCountLimit || window.totalCost > windowCostLimit,
              let overflow = window.removeLeastRecentlyUsed() {
            candidates.append(overflow)
            candidateCost += overflow.cost
        }
        var evicted = 0
        var next = 0
        while count + candidates.count - next > countLimit || totalCost + candidateCost > costLimit {
            guard next < candidates.count else {
                guard probation.removeLeastRecentlyUsed() != nil || protected.removeLeastRecentlyUsed() != nil
                        || window.removeLeastRecentlyUsed() != nil else { break }
                evicted += 1
                continue
            }
            let candidate = candidates[next]
            if let victim = probation.leastRecentlyUsedKey ?? protected.leastRecentlyUsedKey,
               sketch.estimate(candidate.key) > sketch.estimate(victim) {
                if probation.removeValue(forKey: victim) == nil { protected.removeValue(forKey: victim) }
            } else {
                next += 1
                candidateCost -= candidate.cost
            }
            evicted += 1
        }
        for candidate in candidates[next...] {
            probation.insert(candidate.value, forKey: candidate.key, cost: candidate.cost)
        }
        return evicted
    }
}

/// Chooses the window's size for `TinyLFUStore`: `frequencyShare` (1%, Caffeine's start: admission by frequency
/// decides almost everything) or `recencyShare` (the whole cache: plain LRU). Time is cut into samples of ten lookups
/// per entry held. After `firstProbe` samples in one mode, the other is tried for two samples; if the second (the
/// first lets the contents settle) beats the last sample of the current mode by more than `margin`, the cache
/// switches; otherwise it goes back, waits one sample for the contents to settle again, and tries again after twice
/// as many samples (at most `longestWait`). A load that keeps its character so pays for a probe less and less often.
///
/// Measured (`tilecache bench-cache --counts 25,50,100`, seeds 1-3): on the scroll and detail traces it stays within
/// about a point of LRU where the 1% window alone lost up to 23 points, and on zipf traces it keeps TinyLFU's gain.
@usableFromInline
struct WindowTuner: Sendable {
    @usableFromInline static var frequencyShare: Double { 0.01 }
    @usableFromInline static var recencyShare: Double { 1 }
    @usableFromInline static var firstProbe: Int { 4 }
    @usableFromInline static var longestWait: Int { 128 }
    @usableFromInline static var margin: Double { 0.005 }

    @usableFromInline enum Phase: Sendable {
        /// In the current mode, counting samples down to the next probe.
        case steady
        /// First sample of a probe: the contents adjust to the other window size.
        case probeSettling
        /// Second sample of a probe: its hit rate is compared.
        case probeJudged
        /// A probe lost: one sample for the contents to adjust back, not compared.
        case returning
    }

    @usableFromInline var hits = 0
    @usableFromInline var lookups = 0
    @usableFromInline var recency = false
    @usableFromInline var phase = Phase.steady
    @usableFromInline var baseline = 0.0
    @usableFromInline var wait = firstProbe
    @usableFromInline var countdown = firstProbe

    @usableFromInline init() {}

    /// Counts a lookup; at the end of a sample, the window's share from now on (nil otherwise).
    @inlinable
    mutating func record(hit: Bool, sampleSize: Int) -> Double? {
        lookups += 1
        if hit { hits += 1 }
        guard lookups >= max(100, sampleSize) else { return nil }
        let hitRate = Double(hits) / Double(lookups)
        hits = 0
        lookups = 0
        switch phase {
        case .steady:
            baseline = hitRate
            countdown -= 1
            if countdown <= 0 { phase = .probeSettling }
        case .probeSettling:
            phase = .probeJudged
        case .probeJudged:
            if hitRate > baseline + Self.margin {
                recency.toggle()
                wait = Self.firstProbe
                baseline = hitRate
                phase = .steady
            } else {
                wait = min(2 * wait, Self.longestWait)
                phase = .returning
            }
            countdown = wait
        case .returning:
            phase = .steady
        }
        let probing = phase == .probeSettling || phase == .probeJudged
        return recency != probing ? Self.recencyShare : Self.frequencyShare
    }
}

/// A count-min sketch of 4-bit counters (four per key, from one 64-bit hash), halved periodically so that old
/// popularity fades: TinyLFU's estimate of how often a key was asked for lately.
@usableFromInline
struct FrequencySketch: Sendable {
    @usableFromInline var table: [UInt64]
    @usableFromInline var mask: Int
    @usableFromInline var additions = 0
    @usableFromInline var sampleSize: Int
    @usableFromInline let expectedEntries: Int

    /// A sketch for about `expectedEntries` keys (a word of 16 counters each), halved every `10 x expectedEntries`
    /// sightings, and no more often than every 640: with fewer, a small cache's counts are too few to tell a popular
    /// key from a lucky one (at 25 entries on a zipf 1.0 trace, 54% of the LRU-Belady gap closed instead of 47%).
    @usableFromInline
    init(expectedEntries: Int) {
        self.expectedEntries = max(1, expectedEntries)
        var size = 1
        while size < max(16, expectedEntries) { size <<= 1 }
        table = [UInt64](repeating: 0, count: size)
        mask = size - 1
        sampleSize = 10 * max(64, expectedEntries)
    }

    /// The key's hash, spread (the standard library's hash is seeded per process).
    @inlinable
    static func spread(_ hash: Int) -> UInt64 {
        var x = UInt64(bitPattern: Int64(hash))
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 31)
    }

    @inlinable
    func position(_ hash: UInt64, _ row: Int) -> (word: Int, shift: UInt64) {
        let h = hash &+ UInt64(row) &* 0x9E37_79B9_7F4A_7C15
        let mixed = (h ^ (h >> 32)) &* 0xD6E8_FEB8_6659_FD93
        let word = Int(truncatingIfNeeded: mixed >> 8) & mask
        // Each row uses its own quarter of the word's 16 counters.
        let counter = UInt64(row * 4) + (mixed & 3)
        return (word, counter * 4)
    }

    /// How often `key` was seen lately (0-15).
    @inlinable
    func estimate<Key: Hashable>(_ key: Key) -> Int {
        let hash = Self.spread(key.hashValue)
        var lowest = 15
        for row in 0..<4 {
            let (word, shift) = position(hash, row)
            lowest = min(lowest, Int((table[word] >> shift) & 0xF))
        }
        return lowest
    }

    /// Counts one more sighting of `key` (counters saturate at 15); halves every counter each `sampleSize` sightings.
    @inlinable
    mutating func increment<Key: Hashable>(_ key: Key) {
        let hash = Self.spread(key.hashValue)
        var added = false
        for row in 0..<4 {
            let (word, shift) = position(hash, row)
            if (table[word] >> shift) & 0xF < 15 {
                table[word] &+= 1 << shift
                added = true
            }
        }
        guard added else { return }
        additions += 1
        if additions >= sampleSize { reset() }
    }

    /// Halves every counter (the 4-bit fields shift right together; the mask drops the bit each borrows).
    @inlinable
    mutating func reset() {
        for index in table.indices { table[index] = (table[index] >> 1) & 0x7777_7777_7777_7777 }
        additions /= 2
    }
}

extension TinyLFUStore: Sendable where Key: Sendable, Value: Sendable {}

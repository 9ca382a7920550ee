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
/// The regions are lists of one `LRUStore` (the one list-and-slot engine): a lookup hashes the key once, the sketch's
/// hash is kept in the entry's slot, and moving between regions relinks a slot. The count and cost limits hold exactly
/// after every call, as with the plain LRU. Not thread-safe: `MemoryCache` serialises access.
@usableFromInline
struct TinyLFUStore<Key: Hashable, Value> {
    /// Every entry, in one of four lists: the window, probation, protected, and, during a trim only, candidates.
    @usableFromInline var store: LRUStore<Key, Value>
    @usableFromInline var sketch: FrequencySketch
    @usableFromInline private(set) var countLimit: Int
    @usableFromInline private(set) var costLimit: Int

    @usableFromInline static var window: Int { 0 }
    @usableFromInline static var probation: Int { 1 }
    @usableFromInline static var protected: Int { 2 }
    @usableFromInline static var candidates: Int { 3 }

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
        // The regions are bounded here, not by the store's own limits.
        store = LRUStore(countLimit: .max, costLimit: .max, lists: 4)
        // Sized for the count limit, or for 256 entries when only bytes limit the cache; it grows with the entries.
        sketch = FrequencySketch(expectedEntries: min(countLimit, 256))
        updateRegionLimits()
    }

    @inlinable var count: Int { store.count }
    @inlinable var totalCost: Int { store.totalCost }

    /// The regions' limits, worked out when the limits or the window's share change (not on every lookup).
    @usableFromInline var windowCountLimit = 1
    @usableFromInline var windowCostLimit = 1
    @usableFromInline var protectedCountLimit = 1
    @usableFromInline var protectedCostLimit = 1

    @inlinable
    mutating func updateRegionLimits() {
        windowCountLimit = max(1, Self.portion(windowShare, of: countLimit))
        windowCostLimit = max(1, Self.portion(windowShare, of: costLimit))
        protectedCountLimit = max(1, Self.portion(Self.protectedShare, of: countLimit - windowCountLimit))
        protectedCostLimit = max(1, Self.portion(Self.protectedShare, of: costLimit - windowCostLimit))
    }

    /// `share` (0...1) of `limit`, rounded down; a limit of `Int.max` (none) stays out of `Double`'s rounding.
    @inlinable
    static func portion(_ share: Double, of limit: Int) -> Int {
        share >= 1 ? limit : Int(min(Double(limit) * share, Double(Int.max / 2)))
    }

    /// The value for `key`; every lookup, hit or miss, counts in the frequency sketch and in the tuner's sample (ten
    /// lookups per entry held). A hit in probation moves the entry to protected. A hit hashes the key once (the
    /// sketch's hash is kept in the entry's slot).
    @inlinable
    mutating func value(forKey key: Key) -> Value? {
        guard let slot = store.slot(forKey: key) else {
            sketch.increment(hash: FrequencySketch.spread(key.hashValue))
            tune(hit: false)
            return nil
        }
        sketch.increment(hash: store.tag(ofSlot: slot))
        if store.list(ofSlot: slot) == Self.probation {
            promote(slot)
        } else {
            store.moveToHead(slot)
        }
        tune(hit: true)
        return store.slots[slot].value
    }

    /// Counts a lookup in the tuner's sample; at the end of a sample, takes the window's share it decides on.
    @inlinable
    mutating func tune(hit: Bool) {
        if let share = tuner.record(hit: hit, sampleSize: 10 * max(1, min(countLimit, count))), share != windowShare {
            windowShare = share
            updateRegionLimits()
        }
    }

    /// Moves a probation entry to protected; protected over its share gives its least recently used entries back to
    /// probation (they are not evicted).
    @inlinable
    mutating func promote(_ slot: Int) {
        store.move(slot, toList: Self.protected)
        while store.count(inList: Self.protected) > 1,
              store.count(inList: Self.protected) > protectedCountLimit || store.cost(inList: Self.protected) > protectedCostLimit,
              let demoted = store.leastRecentlyUsedSlot(inList: Self.protected) {
            store.move(demoted, toList: Self.probation)
        }
    }

    @inlinable
    func contains(_ key: Key) -> Bool { store.contains(key) }

    /// Stores `value` in the window (or updates it where it is), then lets the window's overflow compete for the main
    /// region until both limits hold. Returns the number of entries evicted.
    @inlinable
    @discardableResult
    mutating func insert(_ value: Value, forKey key: Key, cost: Int) -> Int {
        guard cost <= costLimit else {
            removeValue(forKey: key)
            return 0
        }
        store.insert(value, forKey: key, cost: cost, list: Self.window, tag: FrequencySketch.spread(key.hashValue))
        let evicted = trim()
        // A cache limited by bytes alone outgrew its sketch: a larger one (Caffeine also starts over when it grows).
        if count > sketch.expectedEntries, sketch.expectedEntries < Self.largestSketch {
            sketch = FrequencySketch(expectedEntries: min(2 * count, Self.largestSketch))
        }
        return evicted
    }

    @inlinable
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? { store.removeValue(forKey: key) }

    @inlinable
    mutating func removeAll() { store.removeAll() }

    @inlinable
    @discardableResult
    mutating func setLimits(countLimit: Int, costLimit: Int) -> Int {
        precondition(countLimit > 0 && costLimit > 0, "cache limits must be positive")
        self.countLimit = countLimit
        self.costLimit = costLimit
        updateRegionLimits()
        return trim()
    }

    /// Keys of the window, then probation, then protected, each from most to least recently used (diagnostics).
    @inlinable var keysByRecency: [Key] {
        store.keysByRecency(inList: Self.window) + store.keysByRecency(inList: Self.probation)
            + store.keysByRecency(inList: Self.protected)
    }

    /// Moves the window's overflow to the candidates, then evicts until both limits hold: each round, the oldest
    /// candidate against the main region's eviction victim (probation's least recently used entry, else protected's);
    /// the one the sketch has seen less often goes, and on a tie the candidate goes (what is in stays). With no
    /// candidate left, the main region (then the window) gives up its least recently used entry. The candidates that
    /// won a place enter probation, oldest first.
    @inlinable
    mutating func trim() -> Int {
        while store.count(inList: Self.window) > 1,
              store.count(inList: Self.window) > windowCountLimit || store.cost(inList: Self.window) > windowCostLimit,
              let overflow = store.leastRecentlyUsedSlot(inList: Self.window) {
            store.move(overflow, toList: Self.candidates)
        }
        var evicted = 0
        while store.count > countLimit || store.totalCost > costLimit {
            guard let candidate = store.leastRecentlyUsedSlot(inList: Self.candidates) else {
                guard let victim = store.leastRecentlyUsedSlot(inList: Self.probation)
                        ?? store.leastRecentlyUsedSlot(inList: Self.protected)
                        ?? store.leastRecentlyUsedSlot(inList: Self.window) else { break }
                store.remove(victim)
                evicted += 1
                continue
            }
            if let victim = store.leastRecentlyUsedSlot(inList: Self.probation) ?? store.leastRecentlyUsedSlot(inList: Self.protected),
               sketch.estimate(hash: store.tag(ofSlot: candidate)) > sketch.estimate(hash: store.tag(ofSlot: victim)) {
                store.remove(victim)
            } else {
                store.remove(candidate)
            }
            evicted += 1
        }
        while let candidate = store.leastRecentlyUsedSlot(inList: Self.candidates) {
            store.move(candidate, toList: Self.probation)
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
    static func position(_ hash: UInt64, _ row: Int, mask: Int) -> (word: Int, shift: UInt64) {
        let h = hash &+ UInt64(row) &* 0x9E37_79B9_7F4A_7C15
        let mixed = (h ^ (h >> 32)) &* 0xD6E8_FEB8_6659_FD93
        let word = Int(truncatingIfNeeded: mixed >> 8) & mask
        // Each row uses its own quarter of the word's 16 counters.
        let counter = UInt64(row * 4) + (mixed & 3)
        return (word, counter * 4)
    }

    /// How often the key with this spread hash (`spread(key.hashValue)`) was seen lately (0-15).
    @inlinable
    func estimate(hash: UInt64) -> Int {
        var lowest = 15
        for row in 0..<4 {
            let (word, shift) = Self.position(hash, row, mask: mask)
            lowest = min(lowest, Int((table[word] >> shift) & 0xF))
        }
        return lowest
    }

    /// Counts one more sighting of the key with this spread hash (counters saturate at 15); halves every counter each
    /// `sampleSize` sightings. (Every lookup comes here: the words are reached through one buffer pointer, without a
    /// uniqueness and a bounds check per counter; `mask` keeps each index in the table.)
    @inlinable
    mutating func increment(hash: UInt64) {
        let mask = mask
        let added = table.withUnsafeMutableBufferPointer { words in
            var added = false
            for row in 0..<4 {
                let (word, shift) = Self.position(hash, row, mask: mask)
                if (words[word] >> shift) & 0xF < 15 {
                    words[word] &+= 1 << shift
                    added = true
                }
            }
            return added
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

/// The LRU engine behind `MemoryCache`: a dictionary from key to slot plus a doubly-linked recency list threaded
/// through a slot array (no allocation per entry once slots are recycled).
///
/// Get, insert, remove and eviction are O(1). The limits hold after every mutating call returns. Not thread-safe:
/// `MemoryCache` serialises access.
///
/// A store may keep several recency lists over the one index and slot array (`init(countLimit:costLimit:lists:)`):
/// W-TinyLFU's window, probation and protected regions are lists of one store, so a lookup hashes the key once and
/// moving an entry between regions relinks a slot instead of removing and inserting it. A plain LRU has one list, and
/// its paths are the same as before but for one branch on the list number.
@usableFromInline
struct LRUStore<Key: Hashable, Value> {
    @usableFromInline
    struct Slot {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        @usableFromInline var newer: Int  // towards the most recently used end; -1 at the head
        @usableFromInline var older: Int  // towards the least recently used end; -1 at the tail
        @usableFromInline var list: Int  // which recency list holds it (0 in a store of one list)
        @usableFromInline var tag: UInt64  // a number the owner keeps with the entry (W-TinyLFU: the key's sketch hash)

        @inlinable
        init(key: Key?, value: Value?, cost: Int, newer: Int, older: Int, list: Int = 0, tag: UInt64 = 0) {
            self.key = key
            self.value = value
            self.cost = cost
            self.newer = newer
            self.older = older
            self.list = list
            self.tag = tag
        }
    }

    @usableFromInline var slots: [Slot] = []
    @usableFromInline var freeSlots: [Int] = []
    @usableFromInline var index: [Key: Int] = [:]
    /// The most and least recently used slot of each list (-1: empty), and each list's entry count and cost (kept
    /// only when there are several lists). Inline arrays: no copy-on-write check on the paths every lookup takes.
    @usableFromInline var heads = InlineArray<4, Int>(repeating: -1)
    @usableFromInline var tails = InlineArray<4, Int>(repeating: -1)
    @usableFromInline var listCounts = InlineArray<4, Int>(repeating: 0)
    @usableFromInline var listCosts = InlineArray<4, Int>(repeating: 0)
    /// How many lists (1 for a plain LRU; at most 4, W-TinyLFU's number).
    @usableFromInline private(set) var lists = 1

    /// The most recently used slot of list 0 (-1: empty).
    @inlinable var head: Int { heads[0] }
    /// The least recently used slot of list 0 (-1: empty).
    @inlinable var tail: Int { tails[0] }

    /// Maximum number of entries (> 0).
    @usableFromInline private(set) var countLimit: Int
    /// Maximum total cost (> 0).
    @usableFromInline private(set) var costLimit: Int
    /// Sum of the costs of the entries held.
    @usableFromInline private(set) var totalCost = 0

    @usableFromInline
    init(countLimit: Int, costLimit: Int) {
        precondition(countLimit > 0 && costLimit > 0, "cache limits must be positive")
        self.countLimit = countLimit
        self.costLimit = costLimit
    }

    /// A store keeping `lists` recency lists (> 1). Its own limits evict from list 0 only; an owner with several lists
    /// usually passes `.max` and decides evictions itself.
    @usableFromInline
    init(countLimit: Int, costLimit: Int, lists: Int) {
        self.init(countLimit: countLimit, costLimit: costLimit)
        precondition(lists > 1 && lists <= heads.count, "a store of several lists keeps 2 to \(heads.count)")
        self.lists = lists
    }

    /// Number of entries held.
    @inlinable var count: Int { index.count }

    /// The value for `key`, marking it most recently used.
    @inlinable
    mutating func value(forKey key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        moveToHead(slot)
        return slots[slot].value
    }

    /// Whether `key` is held, without touching recency.
    @inlinable
    func contains(_ key: Key) -> Bool { index[key] != nil }

    /// Stores `value` as most recently used and evicts least recently used entries until both limits hold.
    ///
    /// An entry whose cost alone exceeds `costLimit` is not stored (and replaces nothing: an older value for the key
    /// is removed, so a stale image is never served). Returns the number of entries evicted to make room.
    @inlinable
    @discardableResult
    mutating func insert(_ value: Value, forKey key: Key, cost: Int) -> Int {
        let cost = max(0, cost)
        guard lists == 1 else {
            // Several lists: the list-aware insert keeps each list's count and cost (a new entry goes to list 0).
            guard cost <= costLimit else {
                removeValue(forKey: key)
                return 0
            }
            insert(value, forKey: key, cost: cost, list: 0, tag: 0)
            return trim()
        }
        if let existing = index[key] {
            guard cost <= costLimit else {
                remove(existing)
                return 0
            }
            totalCost += cost - slots[existing].cost
            slots[existing].value = value
            slots[existing].cost = cost
            moveToHead(existing)
        } else {
            guard cost <= costLimit else { return 0 }
            let slot = allocate(key: key, value: value, cost: cost)
            index[key] = slot
            linkAtHead(slot)
            totalCost += cost
        }
        return trim()
    }

    /// Removes and returns the value for `key`.
    @inlinable
    @discardableResult
    mutating func removeValue(forKey key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        let value = slots[slot].value
        remove(slot)
        return value
    }

    /// Removes every entry.
    @inlinable
    mutating func removeAll() {
        slots.removeAll()
        freeSlots.removeAll()
        index.removeAll()
        totalCost = 0
        for list in heads.indices {
            heads[list] = -1
            tails[list] = -1
            listCounts[list] = 0
            listCosts[list] = 0
        }
    }

    /// Changes the limits, evicting as needed. Returns the number of entries evicted.
    @inlinable
    @discardableResult
    mutating func setLimits(countLimit: Int, costLimit: Int) -> Int {
        precondition(countLimit > 0 && costLimit > 0, "cache limits must be positive")
        self.countLimit = countLimit
        self.costLimit = costLimit
        return trim()
    }

    /// Keys from most to least recently used (for tests and diagnostics; O(n)).
    @inlinable var keysByRecency: [Key] {
        var keys: [Key] = []
        var slot = head
        while slot >= 0 {
            if let key = slots[slot].key { keys.append(key) }
            slot = slots[slot].older
        }
        return keys
    }

    // MARK: - Several lists (W-TinyLFU's regions)

    /// The slot holding `key`, without touching recency.
    @inlinable
    func slot(forKey key: Key) -> Int? { index[key] }

    /// Number of entries in `list`.
    @inlinable
    func count(inList list: Int) -> Int { listCounts[list] }

    /// Total cost of the entries in `list`.
    @inlinable
    func cost(inList list: Int) -> Int { listCosts[list] }

    /// The tag kept with the entry in `slot`, read in place (copying the slot out would retain its key and value).
    @inlinable
    func tag(ofSlot slot: Int) -> UInt64 { slots.withUnsafeBufferPointer { $0[checked: slot].tag } }

    /// The list holding the entry in `slot`, read in place.
    @inlinable
    func list(ofSlot slot: Int) -> Int { slots.withUnsafeBufferPointer { $0[checked: slot].list } }

    /// The least recently used slot of `list`.
    @inlinable
    func leastRecentlyUsedSlot(inList list: Int) -> Int? {
        let last = tails[list]
        return last >= 0 ? last : nil
    }

    /// Moves the entry in `slot` to the most recently used end of `list`.
    @inlinable
    mutating func move(_ slot: Int, toList list: Int) {
        let from = slots[slot].list, cost = slots[slot].cost
        listCounts[from] -= 1
        listCosts[from] -= cost
        listCounts[list] += 1
        listCosts[list] += cost
        relink(slot, toList: list)
    }

    /// Stores `value` as the most recently used entry of `list` (with `tag`), or, when `key` is held, replaces its
    /// value and cost where it is and marks it most recently used in its own list. Evicts nothing (the owner does).
    /// Returns its slot.
    @inlinable
    @discardableResult
    mutating func insert(_ value: Value, forKey key: Key, cost: Int, list: Int, tag: UInt64) -> Int {
        let cost = max(0, cost)
        if let existing = index[key] {
            totalCost += cost - slots[existing].cost
            listCosts[slots[existing].list] += cost - slots[existing].cost
            slots[existing].value = value
            slots[existing].cost = cost
            moveToHead(existing)
            return existing
        }
        let slot = allocate(key: key, value: value, cost: cost)
        slots[slot].list = list
        slots[slot].tag = tag
        index[key] = slot
        linkAtHead(slot)
        totalCost += cost
        listCounts[list] += 1
        listCosts[list] += cost
        return slot
    }

    /// Keys of `list` from most to least recently used (diagnostics; O(n)).
    @inlinable
    func keysByRecency(inList list: Int) -> [Key] {
        var keys: [Key] = []
        var slot = heads[list]
        while slot >= 0 {
            if let key = slots[slot].key { keys.append(key) }
            slot = slots[slot].older
        }
        return keys
    }

    // MARK: - List and slot plumbing

    @inlinable
    mutating func trim() -> Int {
        var evicted = 0
        while index.count > countLimit || totalCost > costLimit, tail >= 0 {
            remove(tail)
            evicted += 1
        }
        return evicted
    }

    @inlinable
    mutating func allocate(key: Key, value: Value, cost: Int) -> Int {
        let slot = Slot(key: key, value: value, cost: cost, newer: -1, older: -1)
        if let reused = freeSlots.popLast() {
            slots[reused] = slot
            return reused
        }
        slots.append(slot)
        return slots.count - 1
    }

    /// Removes the entry in `slot` (unlinks it, then releases the slot).
    @inlinable
    mutating func remove(_ slot: Int) {
        unlink(slot)
        release(slot)
    }

    /// Forgets the entry in an already unlinked slot and recycles the slot.
    @inlinable
    mutating func release(_ slot: Int) {
        if let key = slots[slot].key { index[key] = nil }
        totalCost -= slots[slot].cost
        if lists > 1 {
            listCounts[slots[slot].list] -= 1
            listCosts[slots[slot].list] -= slots[slot].cost
        }
        slots[slot] = Slot(key: nil, value: nil, cost: 0, newer: -1, older: -1)
        freeSlots.append(slot)
    }

    @inlinable
    mutating func linkAtHead(_ slot: Int) {
        slots.withUnsafeMutableBufferPointer { Self.linkAtHead(slot, in: $0, heads: &heads, tails: &tails) }
    }

    @inlinable
    mutating func unlink(_ slot: Int) {
        slots.withUnsafeMutableBufferPointer { Self.unlink(slot, in: $0, heads: &heads, tails: &tails) }
    }

    @inlinable
    mutating func moveToHead(_ slot: Int) {
        let list = slots[slot].list
        guard heads[list] != slot else { return }
        relink(slot, toList: list)
    }

    /// `unlink` then `linkAtHead` into `list`, on every hit (W-TinyLFU's promotions take two), through one buffer
    /// pointer: the four slots touched cost one uniqueness check of the slot array, not eight.
    @inlinable
    mutating func relink(_ slot: Int, toList list: Int) {
        slots.withUnsafeMutableBufferPointer { slots in
            Self.unlink(slot, in: slots, heads: &heads, tails: &tails)
            slots[checked: slot].list = list
            Self.linkAtHead(slot, in: slots, heads: &heads, tails: &tails)
        }
    }

    /// Puts the unlinked `slot` at the most recently used end of its list. Each index is checked against the slot
    /// count (a broken link traps, as the array's subscript would).
    @inlinable
    static func linkAtHead(_ slot: Int, in slots: UnsafeMutableBufferPointer<Slot>, heads: inout InlineArray<4, Int>,
                           tails: inout InlineArray<4, Int>) {
        let list = slots[checked: slot].list, first = heads[list]
        slots[slot].newer = -1
        slots[slot].older = first
        if first >= 0 { slots[checked: first].newer = slot }
        heads[list] = slot
        if tails[list] < 0 { tails[list] = slot }
    }

    /// Takes `slot` out of its list, joining its neighbours (or moving the list's ends).
    @inlinable
    static func unlink(_ slot: Int, in slots: UnsafeMutableBufferPointer<Slot>, heads: inout InlineArray<4, Int>,
                       tails: inout InlineArray<4, Int>) {
        let newer = slots[checked: slot].newer, older = slots[slot].older, list = slots[slot].list
        if newer >= 0 { slots[checked: newer].older = older } else { heads[list] = older }
        if older >= 0 { slots[checked: older].newer = newer } else { tails[list] = newer }
        slots[slot].newer = -1
        slots[slot].older = -1
    }
}

extension UnsafeBufferPointer {
    /// The element at `index`, which must be in bounds in release builds too (a plain subscript checks only in debug).
    @inlinable
    subscript(checked index: Int) -> Element {
        precondition(index >= 0 && index < count, "slot out of range")
        return self[index]
    }
}

extension UnsafeMutableBufferPointer {
    /// The element at `index`, which must be in bounds in release builds too (a plain subscript checks only in debug).
    @inlinable
    subscript(checked index: Int) -> Element {
        get {
            precondition(index >= 0 && index < count, "slot out of range")
            return self[index]
        }
        nonmutating _modify {
            precondition(index >= 0 && index < count, "slot out of range")
            yield &self[index]
        }
    }
}

extension LRUStore: Sendable where Key: Sendable, Value: Sendable {}
extension LRUStore.Slot: Sendable where Key: Sendable, Value: Sendable {}

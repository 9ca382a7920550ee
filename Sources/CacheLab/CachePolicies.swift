import DequeModule
import HeapModule
import ImageCore

/// The replacement policies the lab replays a trace against.
public enum CachePolicy: String, Sendable, CaseIterable, Codable {
    /// TileCache's own `MemoryCache` (the real type): least recently used, exact count and byte limits.
    case lru
    /// TileCache's own `MemoryCache` with its W-TinyLFU policy (`--memory-policy tinylfu`): an LRU window (1%, or
    /// the whole cache while recency pays more), a frequency sketch deciding admission to a segmented LRU.
    case tinylfu
    /// First in, first out: hits do not refresh an entry.
    case fifo
    /// SIEVE (Zhang et al., NSDI 2024): FIFO order plus a visited bit and a moving hand; a simple policy that often
    /// beats LRU on skewed traces.
    case sieve
    /// Belady's MIN with bypass: evicts the entry used again furthest in the future, and does not admit an object
    /// needed later than everything it would displace. Optimal for count limits; for byte limits (objects of
    /// different sizes, where the optimum is NP-hard) the classic size-blind bound, in practice an upper bound.
    case belady
}

/// A cache's limits; nil means not limited.
public struct CacheSize: Sendable, Hashable, Codable {
    /// Most entries.
    public var countLimit: Int?
    /// Most bytes.
    public var byteLimit: Int?

    public init(countLimit: Int? = nil, byteLimit: Int? = nil) {
        self.countLimit = countLimit
        self.byteLimit = byteLimit
    }
}

/// Hits of one policy at one size.
struct Replay {
    var hits = 0
    var hitBytes = 0
    /// The most entries and bytes held at once (how tests check that the limits hold).
    var peakCount = 0
    var peakBytes = 0

    mutating func held(count: Int, bytes: Int) {
        peakCount = max(peakCount, count)
        peakBytes = max(peakBytes, bytes)
    }
}

/// Replays `trace` against `policy` at `size`.
func replay(_ trace: AccessTrace, policy: CachePolicy, size: CacheSize) -> Replay {
    let bytes = trace.objects.map(\.bytes)
    let countLimit = size.countLimit ?? Int.max
    let byteLimit = size.byteLimit ?? Int.max
    switch policy {
    case .lru: return replayMemoryCache(trace.accesses, bytes: bytes, countLimit: countLimit, byteLimit: byteLimit, policy: .lru)
    case .tinylfu: return replayMemoryCache(trace.accesses, bytes: bytes, countLimit: countLimit, byteLimit: byteLimit, policy: .tinyLFU)
    case .fifo: return replayFIFO(trace.accesses, bytes: bytes, countLimit: countLimit, byteLimit: byteLimit)
    case .sieve: return replaySIEVE(trace.accesses, bytes: bytes, countLimit: countLimit, byteLimit: byteLimit)
    case .belady: return replayBelady(trace.accesses, bytes: bytes, countLimit: countLimit, byteLimit: byteLimit)
    }
}

/// The product's `MemoryCache`, used exactly as the pipeline uses it: look up, and on a miss insert with the decoded
/// size as cost (an object larger than the whole byte limit is refused, as in the product).
private func replayMemoryCache(_ accesses: [Int32], bytes: [Int], countLimit: Int, byteLimit: Int,
                               policy: MemoryCache<Int32, Int32>.Policy) -> Replay {
    let cache = MemoryCache<Int32, Int32>(countLimit: countLimit, costLimit: byteLimit, policy: policy)
    var result = Replay()
    for id in accesses {
        if cache.value(forKey: id) != nil {
            result.hits += 1
            result.hitBytes += bytes[Int(id)]
        } else {
            if cache.set(id, forKey: id, cost: bytes[Int(id)]) { result.held(count: cache.count, bytes: cache.totalCost) }
        }
    }
    return result
}

private func replayFIFO(_ accesses: [Int32], bytes: [Int], countLimit: Int, byteLimit: Int) -> Replay {
    var queue = Deque<Int32>()
    var cached = [Bool](repeating: false, count: bytes.count)
    var heldBytes = 0
    var result = Replay()
    for id in accesses {
        let object = Int(id)
        if cached[object] {
            result.hits += 1
            result.hitBytes += bytes[object]
            continue
        }
        guard bytes[object] <= byteLimit else { continue }
        while queue.count + 1 > countLimit || heldBytes + bytes[object] > byteLimit {
            let victim = Int(queue.removeFirst())
            cached[victim] = false
            heldBytes -= bytes[victim]
        }
        queue.append(id)
        cached[object] = true
        heldBytes += bytes[object]
        result.held(count: queue.count, bytes: heldBytes)
    }
    return result
}

private func replaySIEVE(_ accesses: [Int32], bytes: [Int], countLimit: Int, byteLimit: Int) -> Replay {
    let none = -1
    var newer = [Int](repeating: none, count: bytes.count)  // towards the head (newest)
    var older = [Int](repeating: none, count: bytes.count)  // towards the tail (oldest)
    var cached = [Bool](repeating: false, count: bytes.count)
    var visited = [Bool](repeating: false, count: bytes.count)
    var head = none, tail = none, hand = none
    var count = 0, heldBytes = 0
    var result = Replay()

    func unlink(_ object: Int) {
        if newer[object] != none { older[newer[object]] = older[object] } else { head = older[object] }
        if older[object] != none { newer[older[object]] = newer[object] } else { tail = newer[object] }
        newer[object] = none
        older[object] = none
    }

    for id in accesses {
        let object = Int(id)
        if cached[object] {
            visited[object] = true
            result.hits += 1
            result.hitBytes += bytes[object]
            continue
        }
        guard bytes[object] <= byteLimit else { continue }
        while count + 1 > countLimit || heldBytes + bytes[object] > byteLimit {
            var candidate = hand != none ? hand : tail
            while visited[candidate] {
                visited[candidate] = false
                candidate = newer[candidate] != none ? newer[candidate] : tail
            }
            hand = newer[candidate]
            unlink(candidate)
            cached[candidate] = false
            count -= 1
            heldBytes -= bytes[candidate]
        }
        older[object] = head
        if head != none { newer[head] = object }
        head = object
        if tail == none { tail = object }
        cached[object] = true
        visited[object] = false
        count += 1
        heldBytes += bytes[object]
        result.held(count: count, bytes: heldBytes)
    }
    return result
}

private struct FutureUse: Comparable {
    var next: Int
    var object: Int
    static func < (a: FutureUse, b: FutureUse) -> Bool { a.next < b.next }
}

private func replayBelady(_ accesses: [Int32], bytes: [Int], countLimit: Int, byteLimit: Int) -> Replay {
    // nextUse[i]: the position of the next access to the object accessed at i, or Int.max.
    var nextUse = [Int](repeating: Int.max, count: accesses.count)
    var seen = [Int](repeating: Int.max, count: bytes.count)
    for index in accesses.indices.reversed() {
        let object = Int(accesses[index])
        nextUse[index] = seen[object]
        seen[object] = index
    }
    var cachedNext = [Int](repeating: -1, count: bytes.count)  // -1: not cached; else the entry's next use
    var heap = Heap<FutureUse>()  // may hold stale entries; an entry is live when cachedNext matches
    var count = 0, heldBytes = 0
    var result = Replay()
    var victims: [FutureUse] = []
    for (index, id) in accesses.enumerated() {
        let object = Int(id)
        let next = nextUse[index]
        if cachedNext[object] >= 0 {
            result.hits += 1
            result.hitBytes += bytes[object]
            if next == Int.max {  // never used again: free its room now, as MIN would at its next eviction
                cachedNext[object] = -1
                count -= 1
                heldBytes -= bytes[object]
            } else {
                cachedNext[object] = next
                heap.insert(FutureUse(next: next, object: object))
            }
            continue
        }
        guard next != Int.max, bytes[object] <= byteLimit else { continue }  // bypass: never reused, or too big
        // Collect the entries used furthest in the future until the object fits; admit it only if every one of
        // them is needed later than the object itself.
        victims.removeAll(keepingCapacity: true)
        var freedCount = 0, freedBytes = 0
        var fits = true
        while count - freedCount + 1 > countLimit || heldBytes - freedBytes + bytes[object] > byteLimit {
            guard let farthest = heap.popMax() else { fits = false; break }
            guard cachedNext[farthest.object] == farthest.next else { continue }  // stale
            victims.append(farthest)
            if farthest.next < next { fits = false; break }
            freedCount += 1
            freedBytes += bytes[farthest.object]
        }
        if !fits {
            for victim in victims { heap.insert(victim) }
            continue
        }
        for victim in victims { cachedNext[victim.object] = -1 }
        count += 1 - freedCount
        heldBytes += bytes[object] - freedBytes
        cachedNext[object] = next
        heap.insert(FutureUse(next: next, object: object))
        result.held(count: count, bytes: heldBytes)
    }
    return result
}

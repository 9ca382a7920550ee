import ImageCore
import Testing
import TestSupport

@Suite("MemoryCache", .timeLimit(.minutes(5)))
struct MemoryCacheTests {
    @Test("evicts the least recently used entry, and a get refreshes recency")
    func lruOrder() {
        let cache = MemoryCache<String, Int>(countLimit: 3, costLimit: 1000)
        cache.set(1, forKey: "a", cost: 1)
        cache.set(2, forKey: "b", cost: 1)
        cache.set(3, forKey: "c", cost: 1)
        #expect(cache.value(forKey: "a") == 1)  // a becomes most recent; b is now the oldest
        cache.set(4, forKey: "d", cost: 1)
        #expect(cache.keysByRecency == ["d", "a", "c"])
        #expect(cache.value(forKey: "b") == nil)
        #expect(cache.statistics.evictions == 1)
    }

    @Test("the cost limit is exact after every insert")
    func costLimit() {
        let cache = MemoryCache<Int, Int>(countLimit: 100, costLimit: 100)
        for key in 0..<50 {
            cache.set(key, forKey: key, cost: 7 + key % 13)
            #expect(cache.totalCost <= 100)
            #expect(cache.count <= 100)
        }
        #expect(cache.value(forKey: 49) == 49)  // the newest survives
    }

    @Test("the count limit is exact after every insert")
    func countLimit() {
        let cache = MemoryCache<Int, Int>(countLimit: 10, costLimit: .max)
        for key in 0..<100 { cache.set(key, forKey: key, cost: 1); #expect(cache.count <= 10) }
        #expect(cache.keysByRecency == Array((90..<100).reversed()))
        #expect(cache.statistics.evictions == 90)
    }

    @Test("an entry larger than the whole cost limit is not cached and removes a stale older value")
    func oversizedEntry() {
        let cache = MemoryCache<String, Int>(countLimit: 10, costLimit: 100)
        cache.set(1, forKey: "small", cost: 10)
        cache.set(2, forKey: "big", cost: 101)
        #expect(!cache.contains("big"))
        #expect(cache.contains("small"))
        cache.set(3, forKey: "small", cost: 500)
        #expect(!cache.contains("small"))
        #expect(cache.totalCost == 0)
        #expect(cache.statistics.rejections == 2)
    }

    @Test("replacing a value updates the total cost")
    func replace() {
        let cache = MemoryCache<String, Int>(countLimit: 10, costLimit: 100)
        cache.set(1, forKey: "a", cost: 60)
        cache.set(2, forKey: "a", cost: 30)
        #expect(cache.totalCost == 30 && cache.count == 1 && cache.value(forKey: "a") == 2)
        cache.set(3, forKey: "b", cost: 70)
        #expect(cache.totalCost == 100)
        cache.set(4, forKey: "c", cost: 1)  // must evict a (least recent)
        #expect(!cache.contains("a") && cache.totalCost == 71)
    }

    @Test("lowering the limits evicts at once")
    func setLimits() {
        let cache = MemoryCache<Int, Int>(countLimit: 10, costLimit: 100)
        for key in 0..<10 { cache.set(key, forKey: key, cost: 10) }
        cache.setLimits(countLimit: 3, costLimit: 100)
        #expect(cache.count == 3 && cache.keysByRecency == [9, 8, 7])
    }

    @Test("hits and misses are counted")
    func statistics() {
        let cache = MemoryCache<String, Int>()
        cache.set(1, forKey: "a", cost: 1)
        _ = cache.value(forKey: "a"); _ = cache.value(forKey: "a"); _ = cache.value(forKey: "z")
        let statistics = cache.statistics
        #expect(statistics.hits == 2 && statistics.misses == 1 && statistics.hitRate == 2.0 / 3.0)
    }

    @Test("many tasks at once keep the limits and the bookkeeping consistent")
    func concurrency() async {
        let cache = MemoryCache<Int, [UInt8]>(countLimit: 50, costLimit: 4000)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var random = SystemRandomNumberGenerator()
                    for step in 0..<5000 {
                        let key = Int.random(in: 0..<200, using: &random)
                        if step % 3 == 0 {
                            cache.set([UInt8](repeating: UInt8(worker), count: 10 + key), forKey: key, cost: 10 + key)
                        } else if let value = cache.value(forKey: key) {
                            #expect(value.count == 10 + key)
                        }
                        if step % 500 == 0 { cache.removeValue(forKey: key) }
                    }
                }
            }
        }
        #expect(cache.count <= 50 && cache.totalCost <= 4000)
        let statistics = cache.statistics
        #expect(statistics.hits + statistics.misses == 8 * (5000 - 5000 / 3 - 1))
        let keys = cache.keysByRecency
        #expect(keys.count == cache.count && Set(keys).count == keys.count)
    }
}

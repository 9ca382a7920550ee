import Foundation
import ImageCore
import Testing
import TestSupport
import TileCacheOrigin

@Suite("MemoryCache with W-TinyLFU", .timeLimit(.minutes(5)))
struct TinyLFUTests {
    @Test("both limits hold after every call, and a hit always returns the value last stored for its key",
          arguments: [(10, 1_000), (25, 300), (100, 10_000), (1, 50)])
    func limitsAndValues(countLimit: Int, costLimit: Int) async {
        // CPU-bound: on the thread for long CPU work, so the suite's socket tests and decodes keep their pools' threads.
        let problems = await BlockingWork.runLongCPUWork { Self.problems(countLimit: countLimit, costLimit: costLimit) }
        #expect(problems.stale.isEmpty, "stale values: \(problems.stale.prefix(5))")
        #expect(problems.overLimit.isEmpty, "over a limit after: \(problems.overLimit.prefix(5))")
        #expect(problems.bookkeeping.isEmpty, "\(problems.bookkeeping)")
    }

    static func problems(countLimit: Int, costLimit: Int) -> (stale: [String], overLimit: [String], bookkeeping: [String]) {
        var random = SplitMix64(seed: UInt64(countLimit * 7919 + costLimit))  // seeded, so a failure replays
        let cache = MemoryCache<Int, Int>(countLimit: countLimit, costLimit: costLimit, policy: .tinyLFU)
        var latest: [Int: Int] = [:]
        var stale: [String] = []
        var overLimit: [String] = []
        for step in 0..<10_000 {
            // Skewed keys (a few popular, a long tail), random costs, now and then an oversized one.
            let key = Int(Double(400) * pow(Double.random(in: 0..<1, using: &random), 3))
            if let value = cache.value(forKey: key) {
                if value != latest[key] { stale.append("key \(key) at step \(step)") }
            } else {
                let cost = Int.random(in: 1...(costLimit / 4 + 1), using: &random) + (step % 997 == 0 ? costLimit : 0)
                if cache.set(step, forKey: key, cost: cost) { latest[key] = step } else { latest[key] = nil }
            }
            if cache.count > countLimit || cache.totalCost > costLimit { overLimit.append("step \(step)") }
        }
        let statistics = cache.statistics
        var bookkeeping: [String] = []
        if statistics.count != cache.count || statistics.totalCost != cache.totalCost { bookkeeping.append("statistics disagree") }
        if Set(cache.keysByRecency).count != cache.count { bookkeeping.append("keys and count disagree") }
        return (stale, overLimit, bookkeeping)
    }

    @Test("a one-off scan does not flush what is popular (LRU loses it all)")
    func scanResistance() {
        func popularHitsAfterScan(_ policy: MemoryCache<Int, Int>.Policy) -> Int {
            let cache = MemoryCache<Int, Int>(countLimit: 50, costLimit: .max, policy: policy)
            for _ in 0..<20 {
                for key in 0..<30 where cache.value(forKey: key) == nil { cache.set(key, forKey: key, cost: 1) }
            }
            for key in 1_000..<1_200 where cache.value(forKey: key) == nil { cache.set(key, forKey: key, cost: 1) }
            return (0..<30).filter { cache.value(forKey: $0) != nil }.count
        }
        #expect(popularHitsAfterScan(.lru) == 0)
        #expect(popularHitsAfterScan(.tinyLFU) == 30)
    }

    @Test("an entry larger than the whole cost limit is refused and removes a stale value, as with LRU")
    func oversized() {
        let cache = MemoryCache<String, Int>(countLimit: 10, costLimit: 100, policy: .tinyLFU)
        #expect(cache.set(1, forKey: "a", cost: 60))
        #expect(!cache.set(2, forKey: "a", cost: 101))
        #expect(cache.value(forKey: "a") == nil && cache.totalCost == 0)
        #expect(cache.statistics.rejections == 1)
    }

    @Test("lowering the limits evicts at once; removeAll empties every region")
    func limitsChange() {
        let cache = MemoryCache<Int, Int>(countLimit: 100, costLimit: 1_000, policy: .tinyLFU)
        for key in 0..<100 { _ = cache.value(forKey: key); cache.set(key, forKey: key, cost: 10) }
        #expect(cache.count == 100 && cache.totalCost == 1_000)
        cache.setLimits(countLimit: 20, costLimit: 150)
        #expect(cache.count <= 15 && cache.totalCost <= 150)
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0 && cache.keysByRecency.isEmpty)
    }
}

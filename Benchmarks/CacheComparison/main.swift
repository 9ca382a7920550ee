// MemoryCache (LRU, and its W-TinyLFU policy) against Foundation's NSCache with the same limits (count 100, cost
// 10 MiB): get and set throughput with 1 and 2 threads, 5 alternating rounds, medians. Prints one JSON object;
// arguments naming operations (get-tinylfu, set-ours, ...) measure only those, for a profiler. Used by Benchmarks/compare/run.sh.
import Foundation
import ImageCore

final class Box: @unchecked Sendable {  // immutable after init; only its identity is stored
    let value: Int
    init(_ value: Int) { self.value = value }
}

/// Operations per measurement (environment OPERATIONS; 1,000,000 by default).
let operations = Int(ProcessInfo.processInfo.environment["OPERATIONS"] ?? "") ?? 1_000_000
let urls = (0..<1000).map { "http://www.theodoregray.com/periodictable/Tiles/\($0)/s7.JPG" }
// Immutable after this line and only read afterwards, so sharing it across threads is safe.
nonisolated(unsafe) let nsKeys = urls.map { $0 as NSString }
let boxes = (0..<1000).map { Box($0) }

/// Operations per second of `body(thread, index)` run `operations` times split across `threads` threads.
func throughput(threads: Int, _ body: @escaping @Sendable (Int, Int) -> Void) -> Double {
    let started = DispatchTime.now().uptimeNanoseconds
    DispatchQueue.concurrentPerform(iterations: threads) { thread in
        for index in 0..<(operations / threads) { body(thread, index) }
    }
    return Double(operations) / (Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
}

struct Caches: @unchecked Sendable {  // both caches are thread-safe by contract
    let ours = MemoryCache<String, Box>(countLimit: 100, costLimit: 10 << 20)
    let tinyLFU = MemoryCache<String, Box>(countLimit: 100, costLimit: 10 << 20, policy: .tinyLFU)
    let foundation: NSCache<NSString, Box> = {
        let cache = NSCache<NSString, Box>()
        cache.countLimit = 100
        cache.totalCostLimit = 10 << 20
        return cache
    }()
}

func measure(_ name: String, threads: Int, caches: Caches) -> Double {
    switch name {
    case "get-ours":
        for index in 0..<100 { caches.ours.set(boxes[index], forKey: urls[index], cost: 1000) }
        return throughput(threads: threads) { thread, index in _ = caches.ours.value(forKey: urls[(index + thread * 50) % 100]) }
    case "get-tinylfu":
        for index in 0..<100 { caches.tinyLFU.set(boxes[index], forKey: urls[index], cost: 1000) }
        return throughput(threads: threads) { thread, index in _ = caches.tinyLFU.value(forKey: urls[(index + thread * 50) % 100]) }
    case "get-nscache":
        for index in 0..<100 { caches.foundation.setObject(boxes[index], forKey: nsKeys[index], cost: 1000) }
        return throughput(threads: threads) { thread, index in _ = caches.foundation.object(forKey: nsKeys[(index + thread * 50) % 100]) }
    case "set-ours":
        return throughput(threads: threads) { thread, index in
            let key = (index * 2 + thread) % 1000
            caches.ours.set(boxes[key], forKey: urls[key], cost: 50_000)
        }
    case "set-tinylfu":
        return throughput(threads: threads) { thread, index in
            let key = (index * 2 + thread) % 1000
            caches.tinyLFU.set(boxes[key], forKey: urls[key], cost: 50_000)
        }
    default:
        return throughput(threads: threads) { thread, index in
            let key = (index * 2 + thread) % 1000
            caches.foundation.setObject(boxes[key], forKey: nsKeys[key], cost: 50_000)
        }
    }
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

// `CacheComparison get-tinylfu [get-ours ...]`: those operations only (cases of `measure`), 1 thread, 20 alternating
// rounds (environment ROUNDS), medians: for a profiler, or a quick ratio. Instructions per operation, repeatable on a
// noisy machine: Benchmarks/compare/instructions.sh (callgrind).
let named = CommandLine.arguments.dropFirst()
if !named.isEmpty {
    var rounds = [String: [Double]]()
    for _ in 0..<(Int(ProcessInfo.processInfo.environment["ROUNDS"] ?? "") ?? 20) {
        for name in named { rounds[name, default: []].append(measure(name, threads: 1, caches: Caches())) }
    }
    for name in named { print("\(name): median \(Int(median(rounds[name]!))) operations/s") }
    exit(0)
}

var results: [String: Double] = [:]
for threads in [1, 2] {
    for operation in ["get", "set"] {
        var ours: [Double] = [], tinyLFU: [Double] = [], theirs: [Double] = []
        for _ in 0..<5 {  // alternate, fresh caches each round
            ours.append(measure("\(operation)-ours", threads: threads, caches: Caches()))
            tinyLFU.append(measure("\(operation)-tinylfu", threads: threads, caches: Caches()))
            theirs.append(measure("\(operation)-nscache", threads: threads, caches: Caches()))
        }
        results["\(operation)_\(threads)_memorycache"] = median(ours)
        results["\(operation)_\(threads)_tinylfu"] = median(tinyLFU)
        results["\(operation)_\(threads)_nscache"] = median(theirs)
    }
}
let data = try JSONSerialization.data(withJSONObject: results, options: [.sortedKeys, .prettyPrinted])
print(String(decoding: data, as: UTF8.self))

import Dispatch
import Foundation
import Foundation

/// One policy at one cache size: what it hit.
public struct HitRateResult: Sendable, Codable, Hashable {
    /// `lru`, `fifo`, `sieve` or `belady`.
    public var policy: CachePolicy
    /// Most entries; nil when not limited.
    public var countLimit: Int?
    /// Most bytes; nil when not limited.
    public var byteLimit: Int?
    /// Accesses that hit.
    public var hits: Int
    /// hits / accesses.
    public var hitRate: Double
    /// Bytes of the accesses that hit / bytes of all accesses.
    public var byteHitRate: Double

    enum CodingKeys: String, CodingKey { case policy, countLimit, byteLimit, hits, hitRate, byteHitRate }

    /// Encodes `countLimit` and `byteLimit` as null when not limited, as the JSON report promises.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(policy, forKey: .policy)
        try container.encode(countLimit, forKey: .countLimit)
        try container.encode(byteLimit, forKey: .byteLimit)
        try container.encode(hits, forKey: .hits)
        try container.encode(hitRate, forKey: .hitRate)
        try container.encode(byteHitRate, forKey: .byteHitRate)
    }
}

/// Replays access traces against cache policies and sizes.
public enum HitRateLab {
    /// Every policy at every size, ordered by size, then policy. Runs the replays on all cores, on threads of its own;
    /// the calling thread waits for them (call it from `BlockingWork.runLongCPUWork` in async code).
    public static func run(_ trace: AccessTrace, sizes: [CacheSize], policies: [CachePolicy]) -> [HitRateResult] {
        let jobs = sizes.flatMap { size in policies.map { (size, $0) } }
        let requestedBytes = max(1, trace.requestedBytes)
        let accesses = max(1, trace.accesses.count)
        let results = UnsafeMutableBufferPointer<Replay>.allocate(capacity: jobs.count)
        results.initialize(repeating: Replay())
        defer { results.deallocate() }
        // Threads of its own, not `concurrentPerform`: on Linux that runs on libdispatch's workers, which are also the
        // threads of Swift's cooperative pool, so seconds of replay stopped every task in the process (a service in the
        // same process went ten seconds without answering). Worker w replays jobs w, w + workers, ...; each writes only
        // its own jobs' slots, and the semaphore is waited for once per worker before the slots are read.
        nonisolated(unsafe) let slots = results
        let workers = max(1, min(jobs.count, ProcessInfo.processInfo.activeProcessorCount))
        let finished = DispatchSemaphore(value: 0)
        for worker in 0..<workers {
            let thread = Thread {
                for index in stride(from: worker, to: jobs.count, by: workers) {
                    slots[index] = replay(trace, policy: jobs[index].1, size: jobs[index].0)
                }
                finished.signal()
            }
            thread.name = "tilecache-replay"
            thread.start()
        }
        for _ in 0..<workers { finished.wait() }
        return jobs.enumerated().map { index, job in
            HitRateResult(policy: job.1, countLimit: job.0.countLimit, byteLimit: job.0.byteLimit, hits: results[index].hits,
                          hitRate: Double(results[index].hits) / Double(accesses),
                          byteHitRate: Double(results[index].hitBytes) / Double(requestedBytes))
        }
    }

    /// The smallest size in `results` at which `policy` reaches `target` hit rate, along one axis: among results
    /// limited by count only (`byCount` true) or by bytes only.
    public static func smallestSize(reaching target: Double, policy: CachePolicy, byCount: Bool,
                                    in results: [HitRateResult]) -> HitRateResult? {
        results
            .filter { $0.policy == policy && (byCount ? $0.byteLimit == nil && $0.countLimit != nil : $0.countLimit == nil && $0.byteLimit != nil) }
            .sorted { (byCount ? $0.countLimit! : $0.byteLimit!) < (byCount ? $1.countLimit! : $1.byteLimit!) }
            .first { $0.hitRate >= target }
    }
}

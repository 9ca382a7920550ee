import CacheLab
import Foundation

/// What `tilecache bench-cache` reports.
struct BenchCacheReport: Encodable {
    /// What the trace models.
    var trace: String
    /// Accesses replayed.
    var requests: Int
    /// Distinct images in the trace.
    var distinctImages: Int
    /// Their total decoded size: with this many bytes (and entries) only first accesses miss.
    var footprintBytes: Int
    /// Where the decoded sizes came from.
    var sizesFrom: String
    /// Seed of a generated trace; nil for a trace file.
    var seed: UInt64?
    /// Every policy at every size.
    var results: [HitRateResult]
    /// The hit rate asked for.
    var target: Double
    /// Per policy, the smallest count limit and byte limit (from the sweep) that reach `target`; nil when none does.
    var smallestReachingTarget: [String: Smallest]
    /// Time spent replaying, in seconds.
    var replaySeconds: Double

    struct Smallest: Encodable {
        var countLimit: Int?
        var byteLimit: Int?
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(countLimit, forKey: .countLimit)
            try container.encode(byteLimit, forKey: .byteLimit)
        }
        enum CodingKeys: String, CodingKey { case countLimit, byteLimit }
    }

    init(trace: AccessTrace, results: [HitRateResult], policies: [CachePolicy], target: Double, sizesFrom: String,
         seed: UInt64?, replaySeconds: Double) {
        self.trace = trace.name
        requests = trace.accesses.count
        distinctImages = trace.objects.count
        footprintBytes = trace.footprintBytes
        self.sizesFrom = sizesFrom
        self.seed = seed
        self.results = results
        self.target = target
        self.replaySeconds = replaySeconds
        smallestReachingTarget = Dictionary(uniqueKeysWithValues: policies.map { policy in
            (policy.rawValue, Smallest(
                countLimit: HitRateLab.smallestSize(reaching: target, policy: policy, byCount: true, in: results)?.countLimit,
                byteLimit: HitRateLab.smallestSize(reaching: target, policy: policy, byCount: false, in: results)?.byteLimit))
        })
    }

    var traceDescription: String {
        "\(trace), \(requests) accesses of \(distinctImages) images (\(HitRatePlot.formatBytes(footprintBytes)) decoded)"
            + (seed.map { ", seed \($0)" } ?? "")
    }

    private var policies: [CachePolicy] { CachePolicy.allCases.filter { policy in results.contains { $0.policy == policy } } }

    func render(_ format: OutputFormat) -> String {
        var table = TextTable(headers: ["count limit", "byte limit"] + policies.flatMap { ["\($0.rawValue) hits", "\($0.rawValue) bytes"] })
        table.rightAligned = Set(0..<(2 + policies.count * 2))
        let sizes = results.reduce(into: [CacheSize]()) { sizes, result in
            let size = CacheSize(countLimit: result.countLimit, byteLimit: result.byteLimit)
            if !sizes.contains(size) { sizes.append(size) }
        }
        for size in sizes {
            var row = [size.countLimit.map(String.init) ?? "-", size.byteLimit.map(HitRatePlot.formatBytes) ?? "-"]
            for policy in policies {
                let result = results.first { $0.policy == policy && $0.countLimit == size.countLimit && $0.byteLimit == size.byteLimit }
                row += [result.map { percent($0.hitRate) } ?? "", result.map { percent($0.byteHitRate) } ?? ""]
            }
            table.rows.append(row)
        }
        var lines = ["trace: \(traceDescription)", "sizes: \(sizesFrom)", ""]
        let text = table.render(format)
        lines.append(text.hasSuffix("\n") ? String(text.dropLast()) : text)
        lines.append("")
        lines.append("smallest size reaching a \(percent(target)) hit rate:")
        for policy in policies {
            let smallest = smallestReachingTarget[policy.rawValue]
            let count = smallest?.countLimit.map { "\($0) entries" } ?? "no count limit tried reaches it"
            let bytes = smallest?.byteLimit.map(HitRatePlot.formatBytes) ?? "no byte limit tried reaches it"
            lines.append("  \(policy.rawValue): \(count); \(bytes)")
        }
        lines.append(String(format: "replayed %d accesses at %d sizes x %d policies in %.2f s", requests, sizes.count,
                            policies.count, replaySeconds))
        return lines.joined(separator: "\n") + "\n"
    }

    private func percent(_ value: Double) -> String { String(format: "%.1f%%", value * 100) }
}

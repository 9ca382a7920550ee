import ArgumentParser
import CacheLab
import Foundation
import ImageCore

extension TileCacheCommand {
    /// `tilecache bench-cache`: the hit-rate lab.
    struct BenchCache: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "bench-cache",
            abstract: "Replay access patterns against the memory cache and show the hit rate each size buys.",
            discussion: """
                Replays a seeded access trace against TileCache's own memory cache (the real MemoryCache type, LRU and W-TinyLFU), \
                FIFO, SIEVE and Belady's optimal policy, at every count limit and every byte limit given, using the \
                real decoded sizes of the images (from the disk cache when it has them, else the built-in origin's). \
                Reports hit rate and byte hit rate per size and policy, and the smallest size that reaches --target.

                Patterns: scroll (the element list scrolled up and down, visible rows displayed and rows ahead \
                prefetched), detail (scrolling plus detail views with full-size photos), zipf (popularity with \
                --exponent), uniform; or --trace FILE (a URL or element a line; `tilecache serve --record-trace FILE` \
                writes one). See docs/hit-rates.md.

                Examples:
                  tilecache bench-cache --pattern detail --plot hit-rates.svg
                  tilecache bench-cache --pattern zipf --exponent 0.8 --counts 10,50,100,200 --bytes 5MiB,20MiB
                  tilecache bench-cache --trace accesses.txt --target 0.95 --format json
                """)

        @Option(help: "Access pattern: scroll, detail, zipf or uniform.")
        var pattern: PatternOption = .detail

        @Option(help: "Replay this trace file instead (a URL or element a line, # comments; - for stdin).")
        var trace: String?

        @Option(help: "Accesses to generate for a pattern.")
        var requests = 100_000

        @Option(help: "Seed of the generated trace (same seed, same trace).")
        var seed: UInt64 = 1

        @Option(help: "Zipf exponent (zipf pattern).")
        var exponent = 1.0

        @Option(help: "Rows visible at once (scroll and detail patterns).")
        var visibleRows = 12

        @Option(help: "Rows prefetched ahead of the scroll direction (scroll and detail patterns).")
        var prefetchRows = 8

        @Option(help: "Chance that a scroll stop opens a detail view (detail pattern).")
        var openProbability = 0.3

        @Option(help: "Count limits to sweep (no byte limit), comma-separated; 'none' to skip (default: \(Self.defaultCounts)).",
                transform: ListArgument.init(parsing:))
        var counts = Self.defaultCounts

        @Option(help: "Byte limits to sweep (no count limit), comma-separated; 'none' to skip (default: \(Self.defaultBytes)).",
                transform: ListArgument.init(parsing:))
        var bytes = Self.defaultBytes

        @Option(help: "Sizes limited by both, as COUNT:BYTES, comma-separated; 'none' to skip (default: \(Self.defaultCombined), the seed app's cache).",
                transform: ListArgument.init(parsing:))
        var combined = Self.defaultCombined

        @Option(help: "Policies, comma-separated: lru, tinylfu, fifo, sieve, belady (default: all).", transform: ListArgument.init(parsing:))
        var policies = ListArgument(CachePolicy.allCases)

        static let defaultCounts = ListArgument([10, 25, 50, 100, 200].map(CountLimit.init))
        static let defaultBytes = ListArgument([1, 5, 10, 50].map { ByteLimit(ByteSize(bytes: $0 * 1024 * 1024)) })
        static let defaultCombined = ListArgument([CombinedLimit(100, ByteSize(bytes: 10 * 1024 * 1024))])

        @Option(help: "Hit rate to reach: the report names the smallest size that does.")
        var target = 0.9

        @Option(help: "Write hit-rate curves (one line per policy) to this SVG file (its name must end in .svg).")
        var plot: String?

        @OptionGroup(title: "Disk cache whose images give the decoded sizes") var cacheDirectory: CacheDirectoryOption

        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard (1...50_000_000).contains(requests) else { throw ValidationError("--requests must be 1...50000000, got \(requests)") }
            guard exponent > 0, exponent <= 10 else { throw ValidationError("--exponent must be more than 0 and at most 10, got \(exponent)") }
            guard visibleRows > 0 else { throw ValidationError("--visible-rows must be positive, got \(visibleRows)") }
            guard prefetchRows >= 0 else { throw ValidationError("--prefetch-rows must not be negative, got \(prefetchRows)") }
            guard (0...1).contains(openProbability) else { throw ValidationError("--open-probability must be 0...1, got \(openProbability)") }
            guard target > 0, target <= 1 else { throw ValidationError("--target must be more than 0 and at most 1, got \(target)") }
            guard !sizes.isEmpty else { throw ValidationError("--counts, --bytes and --combined are all 'none': nothing to measure") }
            guard !policies.items.isEmpty else { throw ValidationError("--policies is 'none': name at least one policy to replay") }
            if let plot { try Self.checkPlotPath(plot) }
        }

        /// The plot is SVG, and only SVG: a path whose extension says another format (`rates.png`) would hold SVG under
        /// a name every viewer opens as something else, so it is refused before the replay, naming the path.
        static func checkPlotPath(_ path: String) throws(ValidationError) {
            let name = (path as NSString).lastPathComponent, fileExtension = (name as NSString).pathExtension
            guard fileExtension.lowercased() != "svg" else { return }
            let base = ((name as NSString).deletingPathExtension as NSString).appendingPathExtension("svg") ?? name + ".svg"
            let why = fileExtension.isEmpty ? "" : " (a .\(fileExtension) file would hold SVG)"
            throw ValidationError("--plot \(path): the plot is SVG only\(why): give a name ending in .svg, e.g. \(base)")
        }

        /// Every size to replay, each once: the count limits, then the byte limits, then the combined ones.
        var sizes: [CacheSize] {
            let all = counts.items.map { CacheSize(countLimit: $0.count) } + bytes.items.map { CacheSize(byteLimit: $0.size.bytes) }
                + combined.items.map { CacheSize(countLimit: $0.count.count, byteLimit: $0.bytes.size.bytes) }
            return all.reduce(into: []) { unique, size in if !unique.contains(size) { unique.append(size) } }
        }

        func run() async throws {
            let policies = policies.items
            let imageSizes = await ImageSizes(cacheDirectory: cacheDirectory.path)
            let accessTrace = try makeTrace(imageSizes)
            let started = ContinuousClock.now
            // Seconds of CPU: on the thread for long CPU work, not on a thread of a pool other tasks need.
            let sizes = sizes
            let results = await BlockingWork.runLongCPUWork { HitRateLab.run(accessTrace, sizes: sizes, policies: policies) }
            let seconds = (ContinuousClock.now - started).inSeconds
            let report = BenchCacheReport(trace: accessTrace, results: results, policies: policies, target: target,
                                          sizesFrom: imageSizes.source, seed: trace == nil ? seed : nil, replaySeconds: seconds)
            if let plot {
                let title = "Memory-cache hit rate by size: \(report.traceDescription)"
                try TextFile.write(HitRatePlot.svg(results, title: title, target: target), to: plot, option: "--plot")
            }
            Console.current.out(output.format == .json ? ReportJSON.encode(report) : report.render(output.format))
            if let plot { Console.current.err("plot written to \(plot)\n") }
        }

        private func makeTrace(_ sizes: ImageSizes) throws -> AccessTrace {
            let urls: [String]
            let name: String
            if let trace {
                let input: InputFile
                do { input = try InputFile.read(trace, what: "the trace") } catch { throw InputError("--trace: \(error.message)") }
                do { urls = try TraceFile.urls(in: input.text, file: input.name) } catch {
                    throw InputError("--trace: \(error)")
                }
                guard !urls.isEmpty else { throw InputError("nothing to replay: --trace \(input.name) has no accesses (only blank lines and comments?)") }
                name = "trace \((input.name as NSString).lastPathComponent)"
            } else {
                let pattern: TracePattern
                switch self.pattern {
                case .scroll: pattern = .scroll(visibleRows: visibleRows, prefetchRows: prefetchRows)
                case .detail: pattern = .detail(visibleRows: visibleRows, prefetchRows: prefetchRows, openProbability: openProbability)
                case .zipf: pattern = .zipf(exponent: exponent)
                case .uniform: pattern = .uniform
                }
                urls = pattern.urls(count: requests, seed: seed)
                name = pattern.name
            }
            do {
                return try AccessTrace(name: name, urls: urls) { url in try sizes.bytes(of: url) }
            } catch {
                throw InputError("--trace: \(error)")
            }
        }
    }
}

/// `--pattern` values.
enum PatternOption: String, CaseIterable, ExpressibleByArgument {
    case scroll, detail, zipf, uniform
}

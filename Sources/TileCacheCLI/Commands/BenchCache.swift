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
                Replays a seeded access trace against TileCache's own LRU memory cache (the real MemoryCache type), \
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

        @Option(help: "Count limits to sweep (no byte limit), comma-separated; 'none' to skip.")
        var counts = "10,25,50,100,200"

        @Option(help: "Byte limits to sweep (no count limit), comma-separated, e.g. 1MiB,10MiB; 'none' to skip.")
        var bytes = "1MiB,5MiB,10MiB,50MiB"

        @Option(help: "Sizes limited by both, as COUNT:BYTES, comma-separated (default: the seed app's 100 entries and 10 MiB); 'none' to skip.")
        var combined = "100:10MiB"

        @Option(help: "Policies, comma-separated: lru, fifo, sieve, belady.")
        var policies = "lru,fifo,sieve,belady"

        @Option(help: "Hit rate to reach: the report names the smallest size that does.")
        var target = 0.9

        @Option(help: "Write hit-rate curves (one line per policy) to this SVG file.")
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
            let sizes = try parsedSizes()
            guard !sizes.isEmpty else { throw ValidationError("--counts, --bytes and --combined are all 'none': nothing to measure") }
            _ = try parsedPolicies()
        }

        func parsedSizes() throws -> [CacheSize] {
            var sizes: [CacheSize] = []
            if counts.lowercased() != "none" {
                for item in counts.split(separator: ",", omittingEmptySubsequences: false) {
                    let text = item.trimmingCharacters(in: .whitespaces)
                    guard let count = Int(text), count > 0 else {
                        throw ValidationError("--counts: '\(text)' is not a positive whole number of entries")
                    }
                    sizes.append(CacheSize(countLimit: count))
                }
            }
            if bytes.lowercased() != "none" {
                for item in bytes.split(separator: ",", omittingEmptySubsequences: false) {
                    let text = item.trimmingCharacters(in: .whitespaces)
                    let size: ByteSize
                    do { size = try ByteSize(parsing: text) } catch { throw ValidationError("--bytes: \(error.message)") }
                    guard size.bytes > 0 else { throw ValidationError("--bytes: '\(text)' is zero bytes") }
                    sizes.append(CacheSize(byteLimit: size.bytes))
                }
            }
            if combined.lowercased() != "none" {
                for item in combined.split(separator: ",", omittingEmptySubsequences: false) {
                    let parts = item.split(separator: ":", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
                    guard parts.count == 2, let count = Int(parts[0]), count > 0, let size = try? ByteSize(parsing: parts[1]), size.bytes > 0 else {
                        throw ValidationError("--combined: '\(item)' is not COUNT:BYTES with both positive, e.g. 100:10MiB")
                    }
                    sizes.append(CacheSize(countLimit: count, byteLimit: size.bytes))
                }
            }
            return sizes.reduce(into: []) { unique, size in if !unique.contains(size) { unique.append(size) } }
        }

        func parsedPolicies() throws -> [CachePolicy] {
            var result: [CachePolicy] = []
            for item in policies.split(separator: ",", omittingEmptySubsequences: false) {
                let text = item.trimmingCharacters(in: .whitespaces).lowercased()
                guard let policy = CachePolicy(rawValue: text) else {
                    throw ValidationError("--policies: '\(text)' is not a policy (use lru, fifo, sieve, belady)")
                }
                if !result.contains(policy) { result.append(policy) }
            }
            return result
        }

        func run() async throws {
            let sizes = try parsedSizes(), policies = try parsedPolicies()
            let imageSizes = ImageSizes(cacheDirectory: cacheDirectory.path)
            let accessTrace = try makeTrace(imageSizes)
            let started = ContinuousClock.now
            let results = HitRateLab.run(accessTrace, sizes: sizes, policies: policies)
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

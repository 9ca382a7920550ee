import ArgumentParser
import Foundation
import ImageCore
import Logging

extension TileCacheCommand {
    /// `tilecache prefetch`: warms the caches with every element image.
    struct Prefetch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Warm the memory and disk caches with every element image and report hit rates.",
            discussion: """
                Full-size photos for elements 90 and up are skipped as known missing unless --include-known-missing.
                On a terminal a progress line is drawn on stderr; otherwise nothing is printed until the report.
                Each run is appended to <cache-dir>/runs.jsonl. Exit code 2 when any URL is broken.

                Examples:
                  tilecache prefetch --elements 1-20 --kind thumbnails
                  tilecache prefetch --repeat 3 --format json --tiles-base http://127.0.0.1:8080/periodictable
                """)

        @OptionGroup var source: SourceOptions
        @OptionGroup var pipeline: PipelineOptions
        @OptionGroup var output: OutputOptions

        @Option(help: "Run the same prefetch this many times in one process (1 cold, later ones warm).")
        var `repeat` = 1

        @Flag(help: "Also fetch images upstream is known to lack (full-size photos for 90 and up).")
        var includeKnownMissing = false

        @Flag(help: "Print the URLs that would be fetched, one a line, and fetch nothing.")
        var dryRun = false

        func validate() throws {
            guard (1...100).contains(`repeat`) else { throw ValidationError("--repeat must be 1...100, got \(`repeat`)") }
        }

        func run() async throws {
            let console = Console.current
            let all = try source.images()
            let images = includeKnownMissing ? all : all.filter { !$0.isKnownMissing }
            let skipped = all.count - images.count
            let fetchable = images.filter { $0.invalidInput == nil }.map(\.url)
            if dryRun {
                console.out(fetchable.map { $0 + "\n" }.joined())
                return
            }
            var logger = Logger(label: "tilecache") { StreamLogHandler.standardError(label: $0) }
            logger.logLevel = output.verbose ? .debug : .warning
            let pipeline = ImagePipeline(configuration: self.pipeline.configuration(), logger: logger)
            let progress = ProgressBar(console: console)

            var reports: [PrefetchReport] = []
            for number in 1...`repeat` {
                let run = await pipeline.prefetch(fetchable, progress: { progress.update($0) })
                let report = PrefetchReport(run: number, images: images, run: run, skippedKnownMissing: skipped)
                reports.append(report)
                if let problem = RunLog.append(RunLog.Entry(date: Date(), command: "prefetch", report: report),
                                               cacheDirectory: self.pipeline.cacheDir) {
                    logger.warning("run log not written: \(problem)")
                }
            }
            console.out(render(reports))
            if reports.last!.failed > 0 { throw brokenFound }
        }

        private func render(_ reports: [PrefetchReport]) -> String {
            switch output.format {
            case .json:
                return reports.count == 1 ? ReportJSON.encode(reports[0]) : ReportJSON.encode(RepeatedRuns(runs: reports))
            case .table, .markdown:
                return reports.map { $0.render(output.format, title: reports.count == 1 ? "prefetch" : "run \($0.run)") }
                    .joined(separator: "\n")
            }
        }
    }
}

/// `--repeat N --format json` with N > 1: every run, and the last run's keys at the top level.
struct RepeatedRuns: Encodable {
    var runs: [PrefetchReport]

    func encode(to encoder: any Encoder) throws {
        try runs.last!.encode(to: encoder)
        enum Keys: String, CodingKey { case runs }
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(runs, forKey: .runs)
    }
}

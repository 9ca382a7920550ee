import ArgumentParser
import Catalogue
import Foundation
import ImageCore
import TileCacheOrigin

extension TileCacheCommand {
    /// `tilecache demo`: the whole job, offline, against the built-in origin.
    struct Demo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "demo",
            abstract: "Prefetch every element image from the built-in origin three times and compare the runs.",
            discussion: """
                Starts the built-in origin on a free loopback port with realistic latency, prefetches every element \
                image into a fresh temporary cache (cold), again with a new pipeline over the same disk cache (as a \
                new process would), then once more from memory, and prints the three reports side by side.
                The memory cache is sized to hold the whole set unless --memory-count/--memory-bytes say otherwise.

                Example:
                  tilecache demo --latency-ms 20
                """)

        @Option(help: "Latency the origin adds to every response, in milliseconds.")
        var latencyMs = 20

        @Option(help: "Most transfers in flight.")
        var concurrency = 8

        @Option(help: "Most decoded images kept in memory.")
        var memoryCount = 256

        @Option(help: "Most decoded pixel bytes kept in memory.", transform: { try ByteSize(parsing: $0) })
        var memoryBytes = ByteSize(bytes: 256 * 1024 * 1024)

        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard latencyMs >= 0 else { throw ValidationError("--latency-ms must not be negative") }
            guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be 1...256") }
            guard memoryCount > 0, memoryBytes.bytes > 0 else { throw ValidationError("memory limits must be positive") }
        }

        func run() async throws {
            let console = Console.current
            var originConfiguration = OriginServer.Configuration()
            originConfiguration.latency = .milliseconds(latencyMs)
            let origin = try await OriginServer.start(originConfiguration)
            await origin.prerender()
            let directory = NSTemporaryDirectory() + "tilecache-demo-" + UUID().uuidString
            defer { try? FileManager.default.removeItem(atPath: directory) }

            let images = ImageList.catalogue(ElementCatalogue.standard.elements, kinds: [.thumbnail, .full], builder: origin.urlBuilder)
            let urls = images.map(\.url)
            let alternatives = ImageList.alternatives(of: images)
            let expectedMissing = ImageList.knownMissing(of: images)
            var configuration = ImagePipeline.Configuration()
            configuration.diskDirectory = directory
            configuration.memoryCountLimit = memoryCount
            configuration.memoryCostLimit = memoryBytes.bytes
            configuration.downloader.maxConcurrentTransfers = concurrency
            if !output.format.isMachineReadable {
                console.err("demo: origin \(origin.baseURL) (\(latencyMs) ms latency), \(urls.count) images, cache \(directory)\n")
            }
            let progress = ProgressBar(console: console)
            var reports: [PrefetchReport] = []
            func pipeline() async throws(RuntimeError) -> ImagePipeline {
                do {
                    return try ImagePipeline(requiringDiskCacheWith: configuration)
                } catch {
                    await origin.shutdown()
                    throw RuntimeError("\(error.subject): cannot use it as the demo's disk cache: \(error.message)")
                }
            }
            let cold = try await pipeline()
            reports.append(PrefetchReport(run: 1, images: images, run: await cold.prefetch(urls, alternatives: alternatives, expectedMissing: expectedMissing, progress: { progress.update($0) }), skippedKnownMissing: 0))
            let restarted = try await pipeline()
            reports.append(PrefetchReport(run: 2, images: images, run: await restarted.prefetch(urls, alternatives: alternatives, expectedMissing: expectedMissing, progress: { progress.update($0) }), skippedKnownMissing: 0))
            reports.append(PrefetchReport(run: 3, images: images, run: await restarted.prefetch(urls, alternatives: alternatives, expectedMissing: expectedMissing, progress: { progress.update($0) }), skippedKnownMissing: 0))
            await origin.shutdown()
            console.out(render(reports))
        }

        private func render(_ reports: [PrefetchReport]) -> String {
            if output.format == .json { return ReportJSON.encode(RepeatedRuns(runs: reports)) }
            let titles = ["1: cold", "2: new pipeline, warm disk", "3: warm memory"]
            var table = TextTable(headers: ["run"] + titles, rightAligned: [1, 2, 3])
            func row(_ name: String, _ value: (PrefetchReport) -> String) { table.rows.append([name] + reports.map(value)) }
            row("requested") { "\($0.requested)" }
            row("succeeded") { "\($0.succeeded)" }
            row("expected missing") { "\($0.expectedMissing)" }
            row("broken") { "\($0.failed)" }
            row("memory hits") { "\($0.memoryHits)" }
            row("disk hits") { "\($0.diskHits)" }
            row("revalidated") { "\($0.revalidated)" }
            row("network fetches") { "\($0.networkFetches)" }
            // The catalogue's 29 known-missing photos are requests too, and can never be hits: the first rate counts
            // every request, the second only the images that exist.
            row("hit rate, all requests") { String(format: "%.1f%%", $0.hitRate * 100) }
            row("hit rate, images that exist") { String(format: "%.1f%%", Self.existingHitRate($0) * 100) }
            row("bytes downloaded") { ByteSize.format($0.bytesDownloaded) }
            row("wall time") { String(format: "%.3f s", $0.durationSeconds) }
            row("images per second") { String(format: "%.0f", $0.imagesPerSecond) }
            for outcome in [ImageOutcome.networkFetch, .diskHit, .memoryHit].map(\.rawValue) + [PipelineReport.failureLatencyKey] {
                row("\(outcome) p50/p99 ms") { report in
                    report.latencyMilliseconds[outcome].map { String(format: "%.3f / %.3f", $0.p50, $0.p99) } ?? "-"
                }
            }
            var text = table.render(output.format)
            if let broken = reports.first?.failures, !broken.isEmpty {
                text += "\nbroken:\n"
                text += broken.map { "  \($0.url): \($0.reason): \($0.message)\n" }.joined()
            }
            if let aliases = reports.first?.aliases, !aliases.isEmpty {
                text += "\nserved under another spelling (the photo host spells the name its own way):\n"
                text += aliases.map { "  \(($0.url as NSString).lastPathComponent) -> \($0.servedBy)\n" }.joined()
            }
            text += "\n"
            for (report, title) in zip(reports, titles) {
                text += String(format: "run %@: hit rate %.1f%% of the images that exist, %d network fetches, %.3f s\n", title,
                               Self.existingHitRate(report) * 100,
                               report.networkFetches, report.durationSeconds)
            }
            return text
        }

        /// Cache answers over the images that exist (served), leaving out the known-missing and broken ones.
        static func existingHitRate(_ report: PrefetchReport) -> Double {
            report.succeeded == 0 ? 0 : Double(report.memoryHits + report.diskHits + report.revalidated) / Double(report.succeeded)
        }
    }
}

extension OutputFormat {
    /// JSON goes to programs; no chatter beside it.
    var isMachineReadable: Bool { self == .json }
}

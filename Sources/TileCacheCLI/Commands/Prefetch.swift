import ArgumentParser
import Foundation
import ImageCore
import SharedStore
import Logging

extension TileCacheCommand {
    /// `tilecache prefetch`: warms the caches with every element image.
    struct Prefetch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "prefetch",
            abstract: "Warm the memory and disk caches with every element image and report hit rates.",
            discussion: """
                Full-size photos for elements 90 and up are skipped as known missing unless --include-known-missing.
                On a terminal a progress line is drawn on stderr; otherwise nothing is printed until the report.
                Each run is appended to <cache-dir>/runs.jsonl. Ctrl-C (or SIGTERM) stops the run and prints what \
                completed, marked interrupted; a second Ctrl-C exits at once.
                Exit codes: 0 all good; 2 some URL is broken; 1 a usage error, an unusable cache directory, an empty \
                URL list (unless --allow-empty), images the file system refused to store, a misconfigured \
                --shared-store, or images not written to it; 130 after Ctrl-C, 143 after SIGTERM.

                Examples:
                  tilecache prefetch --elements 1-20 --kind thumbnails
                  tilecache prefetch --repeat 3 --format json --tiles-base http://127.0.0.1:8080/periodictable
                  tilecache prefetch --extract photos.json --json-path 'photos[].img_src' --sizes 128,256

                With --extract, the images the documents use are fetched, each once; a failure names each document \
                and line that uses it. An image named by a file: URL (a local document's relative reference without \
                --base) is not fetched and counts as failed: give --base.
                """)

        @OptionGroup var source: SourceOptions
        @OptionGroup var extract: ExtractOptions
        @OptionGroup var pipeline: PipelineOptions
        @OptionGroup var output: OutputOptions

        @OptionGroup var progressOption: ProgressOption

        @OptionGroup var configFile: ConfigFileOption

        @Option(help: "Run the same prefetch this many times in one process (1 cold, later ones warm).")
        var `repeat` = 1

        @Flag(help: "Also fetch images upstream is known to lack (full-size photos for 90 and up).")
        var includeKnownMissing = false

        @Flag(help: "Print the URLs that would be fetched, one a line (with --format json, a JSON array), and fetch nothing.")
        var dryRun = false

        @Option(help: ArgumentHelp("Also make these widths of every image fetched, as the service's ?w= variants, so the caches hold them before anyone asks (comma-separated, e.g. 64,128,256).",
                                   valueName: "w,w,..."))
        var sizes: String?

        @Option(help: ArgumentHelp("The formats of --sizes' variants, comma-separated: auto (JPEG, PNG for images with alpha: what the service answers a client that does not accept WebP), jpeg, png, webp, avif.",
                                   valueName: "formats"))
        var sizeFormats = "auto,webp"

        @Flag(help: "Fetch only from public addresses, as tilecache serve fetches the sources its clients name (--allowed-sources), and warm the entries such a service reads: it keeps them apart from the same URLs fetched by a trusted load.")
        var publicAddressesOnly = false

        @Flag(help: "Accept an empty --urls list (nothing to fetch) as success.")
        var allowEmpty = false

        func validate() throws {
            guard (1...100).contains(`repeat`) else { throw ValidationError("--repeat must be 1...100, got \(`repeat`)") }
            _ = try variantProcessing()
            if let conflict = extract.conflict(with: source) { throw conflict }
            if source.urls != nil || extract.isActive, includeKnownMissing {
                throw ValidationError("--include-known-missing applies to the catalogue, not to \(extract.isActive ? "--extract" : "a --urls list")")
            }
        }

        /// `--sizes` x `--size-formats` as the processing of each variant (none without `--sizes`).
        func variantProcessing() throws -> (widths: [Int], formats: [String], processing: [ImageProcessing]) {
            guard let sizes else { return ([], [], []) }
            let widths = try WidthList.parse(sizes, option: "--sizes")
            var formats: [String] = [], chosen: [ImageProcessing.OutputFormat?] = []
            for part in sizeFormats.split(separator: ",", omittingEmptySubsequences: false).map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) {
                let format = ImageProcessing.OutputFormat(name: part)  // nil for `auto`: the source's default format
                guard part == "auto" || format != nil else {
                    throw ValidationError("--size-formats: '\(part)' is not one of auto, \(ImageProcessing.OutputFormat.names)")
                }
                if !chosen.contains(format) { chosen.append(format); formats.append(part) }
            }
            return (widths, formats, widths.flatMap { width in chosen.map { ImageProcessing(width: width, format: $0) } })
        }

        func run() async throws {
            let console = Console.current
            let variants = try variantProcessing()
            let all: [TargetImage]
            if extract.isActive {
                let documents = try await ExtractedDocuments.load(extract)
                for warning in documents.warnings { console.err("warning: \(warning)\n") }
                // The pipeline fetches http(s) only: a file: image is reported, never silently skipped.
                all = documents.images.map { image in
                    var image = image
                    if image.invalidInput == nil, LocalImageCheck.isFileURL(image.url) {
                        image.invalidInput = "a file: URL (a relative reference of a local document): prefetch fetches http(s) only; give --base"
                    }
                    return image
                }
                if all.isEmpty, !allowEmpty {
                    throw InputError("nothing to fetch: \(extract.documents.joined(separator: ", ")) use no images; pass --allow-empty to accept that")
                }
            } else {
                all = try source.images()
                if all.isEmpty, !allowEmpty { throw source.nothingToCheck }
            }
            let images = includeKnownMissing ? all : all.filter { !$0.isKnownMissing }
            let skipped = all.count - images.count
            let fetchable = images.filter { $0.invalidInput == nil }.map(\.url)
            let alternatives = ImageList.alternatives(of: images)
            let expectedMissing = ImageList.knownMissing(of: images)
            if dryRun {
                console.out(output.format == .json ? ReportJSON.encode(fetchable) : fetchable.map { $0 + "\n" }.joined())
                return
            }
            var logger = Logger(label: "tilecache") { StreamLogHandler.standardError(label: $0) }
            logger.logLevel = output.verbose ? .debug : .warning
            let pipeline = try await self.pipeline.makePipeline(logger: logger)
            let progress = progressOption.bar(console)

            var reports: [PrefetchReport] = []
            var interruption: Int32?
            var refusedWrites = 0
            for number in 1...`repeat` {
                let (outcome, signal) = await Interruption.run(onInterrupt: { _ in
                    progress.finish()
                    console.err("interrupted: stopping; press Ctrl-C again to exit at once\n")
                }) {
                    let addresses: AddressRule = publicAddressesOnly ? .publicOnly : .any
                    let run = await pipeline.prefetch(fetchable, alternatives: alternatives, expectedMissing: expectedMissing,
                                                         addresses: addresses, progress: { progress.update($0) })
                    // The variants of every image fetched, made from the original the caches now hold.
                    var variantRun: PrefetchRun?
                    if !variants.processing.isEmpty {
                        let fetched = run.results.filter { if case .succeeded = $0.end { true } else { false } }.map(\.url)
                        let requests = fetched.flatMap { url in
                            variants.processing.map { ImageRequest(url: url, alternatives: alternatives[url] ?? [], processing: $0, addresses: addresses) }
                        }
                        variantRun = await pipeline.prefetch(requests, progress: { progress.update($0) })
                    }
                    // Written to the shared tier before it is reported: a warm-up's writes are part of its work.
                    await pipeline.sharedTier?.drain()
                    return (run, variantRun)
                }
                let (run, variantRun) = (outcome.0, outcome.1)
                progress.finish()
                var report = PrefetchReport(run: number, images: images, run: run, skippedKnownMissing: skipped,
                                            interrupted: signal != nil, diskLimit: self.pipeline.diskBytes.bytes,
                                            diskDirectory: self.pipeline.cacheDir, diskRefusal: pipeline.diskCache?.writeRefusal,
                                            sharedStore: pipeline.sharedTier.map { SharedStoreReport($0) })
                report.variants = variantRun.map { PrefetchReport.VariantsReport(widths: variants.widths, formats: variants.formats, run: $0) }
                reports.append(report)
                refusedWrites = run.disk?.notStoredByRefusal ?? 0
                if let directory = self.pipeline.cacheDir,
                   let problem = RunLog.append(RunLog.Entry(date: Date(), command: "prefetch", report: report), cacheDirectory: directory) {
                    logger.warning("run log not written: \(problem)")
                }
                interruption = signal
                if signal != nil { break }
            }
            console.out(render(reports))
            if let interruption { throw ExitCode(Interruption.exitCode(for: interruption)) }
            if refusedWrites > 0, let directory = self.pipeline.cacheDir {
                let reason = pipeline.diskCache?.writeRefusal.map { ": \($0)" } ?? ""
                throw RuntimeError("\(directory): the warm-up is incomplete: \(refusedWrites) images not stored\(reason)")
            }
            if let shared = reports.last!.sharedStore?.statistics, shared.writesFailed + shared.writesDropped > 0 {
                throw RuntimeError("\(reports.last!.sharedStore!.store): the warm-up of the shared store is incomplete: "
                                   + "\(shared.writesFailed + shared.writesDropped) images not written (see the warnings)")
            }
            if reports.last!.failed > 0 || !(reports.last!.variants?.failures.isEmpty ?? true) { throw brokenFound }
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

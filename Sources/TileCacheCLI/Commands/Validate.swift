import ArgumentParser
import Foundation
import ImageCore
import SharedStore

extension TileCacheCommand {
    /// `tilecache validate`: checks image URLs and reports the broken ones.
    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check image URLs (the catalogue's, or any list) and report the broken ones.",
            discussion: """
                Each URL is fetched and fully validated; nothing is stored unless --store. Known-missing catalogue \
                photos (elements 90 and up) are listed apart from broken URLs. For a missing catalogue photo, other \
                spellings of the name (caesium/cesium, aluminum/aluminium, sulphur/sulfur) are tried once; a photo \
                found that way is ok, reported as served by that URL (and remembered with --store), not broken.
                Lines of a --urls list that are not http(s) URLs are reported as invalid input.
                Ctrl-C (or SIGTERM) stops the check and prints what was checked, marked interrupted; a second Ctrl-C \
                exits at once.
                Exit codes: 0 all good; 2 some URL is broken; 1 a usage error, an empty URL list (unless \
                --allow-empty) or, with --store, an unusable cache directory; 130 after Ctrl-C, 143 after SIGTERM.

                Examples:
                  tilecache validate --kind full
                  tilecache validate --urls rover-photos.txt --format json
                  tilecache validate --kind full --only-broken --progress
                """)

        @OptionGroup var source: SourceOptions
        @OptionGroup var pipeline: PipelineOptions
        @OptionGroup var output: OutputOptions

        @OptionGroup var configFile: ConfigFileOption

        @Flag(help: "Store valid images in the disk cache.")
        var store = false

        @Flag(help: "Accept an empty --urls list (nothing to check) as success.")
        var allowEmpty = false

        @Flag(help: "List only the broken URLs (the summary still counts every URL; JSON results too are only the broken).")
        var onlyBroken = false

        @OptionGroup var progressOption: ProgressOption

        func validate() throws {
            if store, pipeline.noDiskCache { throw ValidationError("--store needs the disk cache: drop --no-disk-cache") }
            if !store, pipeline.sharedStore.sharedStore != nil {
                throw ValidationError("--shared-store applies with --store (without it, validate stores nothing)")
            }
        }

        func run() async throws {
            let console = Console.current
            let images = try source.images()
            if images.isEmpty, !allowEmpty { throw source.nothingToCheck }
            // Without --store the check runs without a disk cache: it reads none and writes none.
            var configuration = try pipeline.configuration()
            if !store { configuration.diskDirectory = nil }
            let checker: ImagePipeline
            do {
                checker = try ImagePipeline(requiringDiskCacheWith: configuration)
            } catch {
                throw PipelineOptions.unusable(error)
            }
            try await pipeline.sharedStore.connect(checker)
            let validator = URLValidator(pipeline: checker, storing: store, concurrency: pipeline.concurrency)
            let progress = progressOption.bar(console)
            let (report, signal) = await Interruption.run(onInterrupt: { _ in
                progress.finish()
                console.err("interrupted: stopping; press Ctrl-C again to exit at once\n")
            }) {
                let report = await validator.validate(images, progress: { progress.update($0) })
                await checker.sharedTier?.drain()
                return report
            }
            progress.finish()
            console.out(render(report))
            if let signal { throw ExitCode(Interruption.exitCode(for: signal)) }
            if report.broken > 0 { throw brokenFound }
        }

        private func render(_ report: URLValidationReport) -> String {
            var report = report
            if onlyBroken { report.results = report.results.filter { !$0.ok && !$0.expectedMissing } }
            if output.format == .json { return ReportJSON.encode(report) }
            func row(_ result: URLValidationResult) -> [String] {
                let size = result.width.map { "\($0)x\(result.height ?? 0)" } ?? "-"
                var outcome = result.ok ? "ok" : "\(result.reason ?? "?"): \(result.message ?? "")"
                if result.ok, !result.warnings.isEmpty { outcome += " (warning: \(result.warnings.joined(separator: "; ")))" }
                if let servedBy = result.servedBy { outcome += " (served by \((servedBy as NSString).lastPathComponent))" }
                return [result.url, result.status.map(String.init) ?? "-", result.format ?? "-", result.contentType ?? "-", size,
                        result.bytes.map(String.init) ?? "-", result.timeMilliseconds.map { String(format: "%.0f ms", $0) } ?? "-", outcome]
            }
            let headers = ["URL", "STATUS", "FORMAT", "CONTENT-TYPE", "SIZE", "BYTES", "TIME", "RESULT"]
            let listed = report.results.filter { !($0.expectedMissing && !$0.ok) }
            var text = TextTable(headers: headers, rows: listed.map(row), rightAligned: [5, 6]).render(output.format)
            let expected = report.results.filter { $0.expectedMissing && !$0.ok }
            if !expected.isEmpty {
                text += "\nExpected missing (upstream has no such image):\n"
                text += TextTable(headers: headers, rows: expected.map(row), rightAligned: [5, 6]).render(output.format)
            }
            text += "\n\(report.checked) checked: \(report.ok) ok, \(report.broken) broken, \(report.expectedMissing) expected missing\n"
            if report.interrupted { text += "interrupted: \(report.notChecked) not checked\n" }
            return text
        }
    }
}

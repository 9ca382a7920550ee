import ArgumentParser
import Foundation
import ImageCore
import SharedStore

extension TileCacheCommand {
    /// `tilecache validate`: checks image URLs and reports the broken ones.
    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "validate",
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
                  tilecache validate --extract README.md --base https://github.com/owner/repo/raw/main/
                  tilecache validate --extract https://example.org/ --extract site.css --format json
                  tilecache validate --extract photos.json --json-path 'photos[].img_src' --dump

                With --extract, each image a document uses is checked once however often it is used, and every \
                result names each document and line that uses it (JSON: usedIn). An image a local document names by \
                a file: URL (a relative reference without --base) is read from disk and validated the same way. \
                --dump lists what the documents reference, with document and line, and fetches nothing.
                """)

        @OptionGroup var source: SourceOptions
        @OptionGroup var extract: ExtractOptions
        @OptionGroup var pipeline: PipelineOptions
        @OptionGroup var output: OutputOptions

        @OptionGroup var configFile: ConfigFileOption

        @Flag(help: "Store valid images in the disk cache.")
        var store = false

        @Flag(help: "Accept an empty --urls list (nothing to check) as success.")
        var allowEmpty = false

        @Flag(help: "List only the broken URLs (the summary still counts every URL; JSON results too are only the broken).")
        var onlyBroken = false

        @Flag(help: "With --extract: list the images the documents reference (document, line, URL) and check nothing.")
        var dump = false

        @OptionGroup var progressOption: ProgressOption

        func validate() throws {
            if let conflict = extract.conflict(with: source) { throw conflict }
            if dump, !extract.isActive { throw ValidationError("--dump lists the images of --extract's documents: give --extract FILE|URL") }
            if dump, store { throw ValidationError("--dump checks nothing, so --store would store nothing: drop one") }
            if store, pipeline.noDiskCache { throw ValidationError("--store needs the disk cache: drop --no-disk-cache") }
            if !store, pipeline.sharedStore.sharedStore != nil {
                throw ValidationError("--shared-store applies with --store (without it, validate stores nothing)")
            }
        }

        func run() async throws {
            let console = Console.current
            let images: [TargetImage]
            if extract.isActive {
                let documents = try await ExtractedDocuments.load(extract)
                for warning in documents.warnings { console.err("warning: \(warning)\n") }
                if dump {
                    console.out(output.format == .json ? ReportJSON.encode(documents) : documents.dumpText())
                    return
                }
                images = documents.images
                if images.isEmpty, !allowEmpty {
                    throw InputError("nothing to check: \(extract.documents.joined(separator: ", ")) use no images; pass --allow-empty to accept that")
                }
            } else {
                images = try source.images()
                if images.isEmpty, !allowEmpty { throw source.nothingToCheck }
            }
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
            var headers = ["URL", "STATUS", "FORMAT", "CONTENT-TYPE", "SIZE", "BYTES", "TIME", "RESULT"]
            // Images from documents: where each is used, as `document:line` (lychee's way of naming a link's place).
            let fromDocuments = extract.isActive
            if fromDocuments { headers.append("USED IN") }
            func documentRow(_ result: URLValidationResult) -> [String] {
                row(result) + (fromDocuments ? [(result.usedIn ?? []).map(\.description).joined(separator: ", ")] : [])
            }
            let listed = report.results.filter { !($0.expectedMissing && !$0.ok) }
            var text = TextTable(headers: headers, rows: listed.map(documentRow), rightAligned: [5, 6]).render(output.format)
            let broken = report.results.filter { !$0.ok && !$0.expectedMissing }
            if fromDocuments, !broken.isEmpty {
                text += output.format == .markdown ? "\n**Broken images, where they are used:**\n\n" : "\nBroken images, where they are used:\n"
                for result in broken {
                    for use in result.usedIn ?? [] {
                        let line = "\(use): \(result.url): \(result.reason ?? "?"): \(result.message ?? "")"
                        text += output.format == .markdown ? "- `\(use)`: \(result.url): \(result.reason ?? "?")\n" : "  \(line)\n"
                    }
                }
            }
            let expected = report.results.filter { $0.expectedMissing && !$0.ok }
            if !expected.isEmpty {
                text += "\nExpected missing (upstream has no such image):\n"
                text += TextTable(headers: headers, rows: expected.map(documentRow), rightAligned: [5, 6]).render(output.format)
            }
            text += "\n\(report.checked) checked: \(report.ok) ok, \(report.broken) broken, \(report.expectedMissing) expected missing\n"
            if report.interrupted { text += "interrupted: \(report.notChecked) not checked\n" }
            return text
        }
    }
}

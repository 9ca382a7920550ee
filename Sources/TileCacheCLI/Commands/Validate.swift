import ArgumentParser
import Foundation
import ImageCore

extension TileCacheCommand {
    /// `tilecache validate`: checks image URLs and reports the broken ones.
    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check image URLs (the catalogue's, or any list) and report the broken ones.",
            discussion: """
                Each URL is fetched and fully validated; nothing is stored unless --store. Known-missing catalogue
                photos (elements 90 and up) are listed apart from broken URLs. For a missing catalogue photo, other
                spellings of the name (caesium/cesium, aluminum/aluminium, sulphur/sulfur) are tried and a working
                one is suggested. Lines of a --urls list that are not http(s) URLs are reported as invalid input.
                Exit code 2 when any URL is broken.

                Examples:
                  tilecache validate --kind full
                  tilecache validate --urls rover-photos.txt --format json
                """)

        @OptionGroup var source: SourceOptions
        @OptionGroup var pipeline: PipelineOptions
        @OptionGroup var output: OutputOptions

        @Flag(help: "Store valid images in the disk cache.")
        var store = false

        func run() async throws {
            let images = try source.images()
            let configuration = pipeline.configuration()
            var disk: DiskCache?
            if store {
                do {
                    disk = try DiskCache(directory: pipeline.cacheDir, sizeLimit: pipeline.diskBytes.bytes)
                } catch {
                    throw ValidationError("--store: \(error.message) (\(error.subject))")
                }
            }
            let downloader = Downloader(engine: TransferEngine(configuration: configuration.engine),
                                        configuration: configuration.downloader)
            let validator = URLValidator(downloader: downloader, inspector: configuration.inspector, store: disk,
                                         concurrency: pipeline.concurrency)
            let builder = source.urls == nil ? ImageURLBuilder(tilesBase: source.tilesBase, imagesBase: source.imagesBase) : nil
            let report = await validator.validate(images, builder: builder)
            Console.current.out(render(report))
            if report.broken > 0 { throw brokenFound }
        }

        private func render(_ report: URLValidationReport) -> String {
            if output.format == .json { return ReportJSON.encode(report) }
            func row(_ result: URLValidationResult) -> [String] {
                let size = result.width.map { "\($0)x\(result.height ?? 0)" } ?? "-"
                var outcome = result.ok ? "ok" : "\(result.reason ?? "?"): \(result.message ?? "")"
                if result.ok, !result.warnings.isEmpty { outcome += " (warning: \(result.warnings.joined(separator: "; ")))" }
                if let suggestion = result.suggestion { outcome += " (try \(suggestion))" }
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
            return text
        }
    }
}

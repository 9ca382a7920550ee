import ArgumentParser
import Foundation
import ImageCore

extension TileCacheCommand {
    /// `tilecache inspect FILE...`: validates local image files.
    struct Inspect: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "inspect",
            abstract: "Validate local image files: format by magic bytes, dimensions, full decode.",
            discussion: """
                A directory argument inspects every file in it, recursively. Symbolic links are followed; hidden \
                files, files that are not regular (FIFOs, devices) and links back into a directory being searched \
                are skipped, and stderr says what was skipped. A path that does not exist is reported as not-found. \
                A TileCache disk cache (or its entries directory) is not searched: its files are cache entries, which \
                `tilecache stats --verify --cache-dir DIR` checks; stderr names it.
                Exit codes: 0 all valid; 2 some file is not a valid image, or a path is not found; 1 a usage error \
                (every path is a disk cache), or nothing to check (no files at all) unless --allow-empty.

                With --placeholders, each valid image's placeholder is made as `serve` makes it (JSON output has \
                it whole: blurhash, thumbhash, average_color, dominant_color, lqip), for pages built ahead of time.
                Examples:
                  tilecache inspect photo.jpg photos/ --format json
                  tilecache inspect photos/ --placeholders --format json
                """)

        @Argument(help: "Image files or directories.")
        var paths: [String] = []

        @Option(help: "Largest accepted width x height.")
        var maxPixels = ImageInspector.defaultMaxPixels

        @Flag(help: "Accept images the decoders return pixels for despite damage (report the warnings).")
        var lenient = false

        @Flag(help: "Decode every pixel at full size, as the pipeline does (slower; the verdict is the same).")
        var fullDecode = false

        @Option(name: [.customShort("j"), .customLong("concurrency")], help: "Files validated at once (default: the number of cores).")
        var concurrencyGiven: Int?

        /// `-j`, else the number of cores.
        var concurrency: Int { concurrencyGiven ?? ProcessInfo.processInfo.activeProcessorCount }

        @Flag(help: "Also make each valid image's placeholder, as the service does: BlurHash, ThumbHash, average and dominant colour, LQIP.")
        var placeholders = false

        @Flag(help: "Accept finding no files at all as success.")
        var allowEmpty = false

        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard !paths.isEmpty else { throw ValidationError("give at least one file or directory to inspect") }
            guard maxPixels > 0 else { throw ValidationError("--max-pixels must be positive, got \(maxPixels)") }
            guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be 1...256, got \(concurrency)") }
        }

        func run() async throws {
            let console = Console.current
            let expansion = FileInspection.expand(paths)
            // Every argument a disk cache: nothing asked for is an image file, so the command line was wrong.
            if expansion.caches.filter(\.isArgument).count == paths.count {
                throw InputError(expansion.caches.map { $0.notice(skipped: false) }.joined(separator: "\n"))
            }
            for cache in expansion.caches { console.err(cache.notice(skipped: true) + "\n") }
            if let notice = FileInspection.Expansion.Skipped.notice(expansion.skipped) { console.err(notice) }
            if expansion.items.isEmpty, !allowEmpty {
                let searched = paths.filter { path in !expansion.caches.contains { $0.isArgument && $0.path == path } }
                throw InputError("nothing to check: no files in \(searched.joined(separator: ", ")); pass --allow-empty to accept that")
            }
            let inspector = ImageInspector(maxPixels: maxPixels, strictness: lenient ? .lenient : .strict)
            let results = await FileInspection.inspect(expansion.items, inspector: inspector, concurrency: concurrency,
                                                       fullDecode: fullDecode, placeholders: placeholders)
            console.out(render(results))
            if results.contains(where: { !$0.valid }) { throw brokenFound }
        }

        private func render(_ results: [FileInspectionResult]) -> String {
            if output.format == .json { return ReportJSON.encode(results) }
            var table = TextTable(headers: ["PATH", "VALID", "FORMAT", "SIZE", "BYTES"] + (placeholders ? ["BLURHASH", "COLOR"] : []) + ["REASON"],
                                  rightAligned: [4])
            for result in results {
                var size = result.width.map { "\($0)x\(result.height ?? 0)" } ?? "-"
                if let orientation = result.orientation, orientation != 1, let width = result.uprightWidth, let height = result.uprightHeight {
                    size += " (EXIF orientation \(orientation): \(width)x\(height) upright)"
                }
                let reason = result.valid
                    ? result.warnings.map { "warning: \($0)" }.joined(separator: "; ")
                    : "\(result.reason ?? "?"): \(result.message ?? "")"
                let placeholder = placeholders ? [result.placeholder?.blurhash ?? "-", result.placeholder?.dominantColor ?? "-"] : []
                table.rows.append([result.path, result.valid ? "yes" : "no", result.format ?? "-", size,
                                   result.bytes.map(String.init) ?? "-"] + placeholder + [reason])
            }
            let invalid = results.filter { !$0.valid }.count
            return table.render(output.format) + "\n\(results.count) files: \(results.count - invalid) valid, \(invalid) invalid\n"
        }
    }
}

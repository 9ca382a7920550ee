import ArgumentParser
import Foundation
import ImageCore

extension TileCacheCommand {
    /// `tilecache thumbnail FILE|DIR... --output DIR|PATTERN`: the service's processing on local files, as
    /// `vipsthumbnail` does.
    ///
    /// Every output is planned and checked before any is written (`ThumbnailOutputPlan`): a run never writes over one
    /// of its inputs or writes one file twice, and replaces an existing file only with `--overwrite`.
    struct Thumbnail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "thumbnail",
            abstract: "Make thumbnails of local image files with the service's processing (no HTTP, no caches).",
            discussion: """
                Each FILE becomes OUTPUT/<name>.<jpg|png|webp>: upright (EXIF orientation applied), shrunk on load, \
                resized with Lanczos-3, encoded at the asked quality, exactly as `tilecache serve` makes `?w=` \
                variants. A DIR is walked as `inspect` walks it; its image files (by their first bytes) are made, \
                each in its subfolder under OUTPUT. --output may be a pattern instead, as vipsthumbnail's -o: %s is \
                the input's name without extension, %e the output's extension (jpg, png, webp), %% a %; a pattern \
                ending in .jpg, .png or .webp chooses that format.
                Nothing is written when an output would be one of the inputs (any spelling or link of it), when two \
                inputs map to one output, or when an output exists and --overwrite is not given; --overwrite never \
                replaces an input. -h is help, as in every command: the height is --height.
                --repeat runs the whole set that many times and reports thumbnails per second, for comparisons with \
                vipsthumbnail and Pillow (docs/benchmarks.md).
                Exit codes: 0 every file made; 2 some file could not be read or processed; 1 a usage error or a \
                refused output (then nothing is written).

                Example:
                  tilecache thumbnail photos/ --width 256 --output 'thumbs/%s-256.%e' --image-format webp
                """)

        @Argument(help: "Image files (JPEG or PNG), folders to walk, or http(s) URLs of images (fetched and validated first).")
        var paths: [String] = []

        @Option(name: .shortAndLong,
                help: "Folder the thumbnails are written to (created if missing), or a pattern such as 'thumbs/%s-64.%e'.")
        var output: String

        @Option(name: [.customShort("w"), .long], help: "Width of the box, in pixels (1-\(ImageProcessing.maxSide)).")
        var width: Int?

        @Option(help: "Height of the box, in pixels (1-\(ImageProcessing.maxSide)); no short name: -h is help.")
        var height: Int?

        @Option(help: "How the image fits the box when both sides are given: inside, cover or fill.")
        var fit: FitOption = .inside

        @Flag(help: "Enlarge images smaller than the box (by default they keep their size).")
        var enlarge = false

        @Option(name: [.customShort("q"), .long], help: "JPEG, WebP and AVIF quality, 1-100.")
        var quality = ImageProcessing.defaultQuality

        @Option(help: "Output format: jpeg, png, webp or avif (default: a pattern's extension, else JPEG, or PNG for images with transparency).")
        var imageFormat: ImageFormatOption?

        @Flag(help: "Replace output files that already exist (never an input).")
        var overwrite = false

        @Option(name: [.customShort("j"), .customLong("concurrency")], help: "Files processed at once (default: the number of cores).")
        var concurrencyGiven: Int?

        /// `-j`, else the number of cores.
        var concurrency: Int { concurrencyGiven ?? ProcessInfo.processInfo.activeProcessorCount }

        @Option(help: "Process the whole set this many times (for timing); the files are written once.")
        var `repeat` = 1

        @OptionGroup var report: OutputOptions

        func validate() throws {
            guard !paths.isEmpty else { throw ValidationError("give at least one image file or folder") }
            let sides = 1...ImageProcessing.maxSide
            for (name, value) in [("--width", width), ("--height", height)] {
                if let value, !sides.contains(value) { throw ValidationError("\(name) must be 1...\(ImageProcessing.maxSide), got \(value)") }
            }
            guard width != nil || height != nil else { throw ValidationError("give --width, --height or both") }
            guard (1...100).contains(quality) else { throw ValidationError("--quality must be 1...100, got \(quality)") }
            guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be 1...256, got \(concurrency)") }
            guard (1...10_000).contains(`repeat`) else { throw ValidationError("--repeat must be 1...10000, got \(`repeat`)") }
            _ = try outputFormat()
        }

        /// The output format: `--image-format`, else the one the `--output` pattern's extension names, else nil (JPEG,
        /// or PNG for images with transparency); with the parsed `--output`.
        ///
        /// - Throws: `ValidationError` for a bad pattern, or a pattern extension that contradicts `--image-format`.
        private func outputFormat() throws -> (ImageProcessing.OutputFormat?, ThumbnailOutputPattern) {
            let pattern: ThumbnailOutputPattern
            do {
                pattern = try ThumbnailOutputPattern(output)
            } catch {
                throw ValidationError(error.message)
            }
            if let implied = pattern.impliedFormat, let asked = imageFormat?.value, implied != asked {
                throw ValidationError("--output '\(output)' ends in a \(implied.rawValue) extension but --image-format is \(asked.rawValue): "
                                      + "give one of them, or end the pattern in .%e")
            }
            return (imageFormat?.value ?? pattern.impliedFormat, pattern)
        }

        func run() async throws {
            let (format, pattern) = try outputFormat()
            let processing = ImageProcessing(width: width, height: height, fit: width == nil || height == nil ? .inside : fit.value, enlarge: enlarge, quality: quality,
                                             format: format)
            // Read every file and fetch every URL first: the timing is the processing's, not the disk's or the network's.
            let urls = paths.filter { RequestURL.isHTTP($0) }, files = paths.filter { !RequestURL.isHTTP($0) }
            var reading = await BlockingWork.run { ThumbnailInputs.gather(files) }
            await reading.fetch(urls)
            let gathered = reading
            if let notice = gathered.skippedNotice { Console.current.err(notice) }
            if gathered.inputs.isEmpty, gathered.failures.isEmpty {
                throw InputError("nothing to thumbnail: no image files in \(paths.joined(separator: ", "))")
            }
            let started = ContinuousClock.now
            var made: [Made] = []
            for round in 1...`repeat` {
                let thisRound = await Self.process(gathered.inputs, processing, concurrency: concurrency)
                if round == 1 { made = thisRound }
            }
            let seconds = (ContinuousClock.now - started).inSeconds
            let succeeded = made.filter { $0.bytes != nil }.count

            // Every output is planned and checked before any is written.
            let outputs = made.map { made in
                made.format.map { pattern.path(for: ThumbnailInputs.outputName(made.result.path), subfolder: made.subfolder, format: $0) }
            }
            let entries = zip(made, outputs).compactMap { made, output in
                output.map { ThumbnailOutputPlan.Entry(input: made.result.path, output: $0) }
            }
            let overwrite = overwrite
            let plan = await BlockingWork.run { ThumbnailOutputPlan(entries, inputs: gathered.tried, overwrite: overwrite) }
            if let refusal = plan.refusal { throw refusal }
            let written = await Self.write(made, to: outputs, plan, concurrency: concurrency)

            let results = gathered.failures + written
            let summary = ThumbnailSummary(files: results, processed: succeeded * `repeat`, seconds: seconds,
                                           perSecond: seconds > 0 ? Double(succeeded * `repeat`) / seconds : 0, concurrency: concurrency)
            Console.current.out(render(summary))
            if results.contains(where: { $0.reason != nil }) { throw brokenFound }
        }

        /// One input processed: its result, and the thumbnail's bytes and format when it was made.
        struct Made: Sendable {
            var result: ThumbnailResult
            var subfolder: String
            var bytes: [UInt8]?
            var format: ImageFormat?
        }

        /// Processes every input, `concurrency` at a time on the blocking-work threads; writes nothing.
        static func process(_ inputs: [ThumbnailInputs.Input], _ processing: ImageProcessing, concurrency: Int) async -> [Made] {
            await BlockingWork.map(inputs, concurrency: concurrency) { input in
                do throws(ImageCoreError) {
                    let made = try ImageProcessor.process(input.bytes, processing, subject: input.path)
                    return Made(result: ThumbnailResult(path: input.path, width: made.width, height: made.height, bytes: made.bytes.count),
                                subfolder: input.subfolder, bytes: made.bytes, format: made.format)
                } catch {
                    return Made(result: ThumbnailResult(path: input.path, reason: error.reason.rawValue, message: error.message),
                                subfolder: input.subfolder)
                }
            }
        }

        /// Writes each thumbnail made to its output (`outputs[i]` is `made[i]`'s, from the checked `plan`),
        /// `concurrency` at a time on the blocking-work threads; a file that cannot be written is a failed result.
        static func write(_ made: [Made], to outputs: [String?], _ plan: ThumbnailOutputPlan, concurrency: Int) async -> [ThumbnailResult] {
            await BlockingWork.map(Array(zip(made, outputs)), concurrency: concurrency) { made, output in
                guard let bytes = made.bytes, let output else { return made.result }
                var result = made.result
                do throws(ImageCoreError) {
                    try plan.write(bytes, to: output)
                    result.output = output
                    return result
                } catch {
                    return ThumbnailResult(path: result.path, reason: error.reason.rawValue, message: error.message)
                }
            }
        }

        private func render(_ summary: ThumbnailSummary) -> String {
            if report.format == .json { return ReportJSON.encode(summary) }
            var table = TextTable(headers: ["PATH", "OUTPUT", "SIZE", "BYTES", "REASON"], rightAligned: [3])
            for file in summary.files {
                table.rows.append([file.path, file.output ?? "-", file.width.map { "\($0)x\(file.height ?? 0)" } ?? "-",
                                   file.bytes.map(String.init) ?? "-", file.reason.map { "\($0): \(file.message ?? "")" } ?? ""])
            }
            let rate = String(format: "%.1f", summary.perSecond)
            return table.render(report.format) + "\n\(summary.processed) thumbnail\(summary.processed == 1 ? "" : "s") in \(String(format: "%.3f", summary.seconds)) s: \(rate) per second (-j \(summary.concurrency))\n"
        }
    }
}

/// `--fit`: `ImageProcessing.Fit` as an argument.
enum FitOption: String, CaseIterable, ExpressibleByArgument {
    case inside, cover, fill
    var value: ImageProcessing.Fit { ImageProcessing.Fit(rawValue: rawValue)! }
}

/// `--image-format`: `ImageProcessing.OutputFormat` as an argument.
enum ImageFormatOption: String, CaseIterable, ExpressibleByArgument {
    case jpeg, png, webp, avif
    var value: ImageProcessing.OutputFormat { ImageProcessing.OutputFormat(rawValue: rawValue)! }
}

/// One file of `tilecache thumbnail`.
struct ThumbnailResult: Sendable, Codable {
    var path: String
    var output: String?
    var width: Int?
    var height: Int?
    var bytes: Int?
    var reason: String?
    var message: String?

    init(path: String, width: Int? = nil, height: Int? = nil, bytes: Int? = nil, reason: String? = nil, message: String? = nil) {
        self.path = path
        self.width = width
        self.height = height
        self.bytes = bytes
        self.reason = reason
        self.message = message
    }
}

/// The report of `tilecache thumbnail`.
struct ThumbnailSummary: Sendable, Codable {
    var files: [ThumbnailResult]
    /// Thumbnails made, over every round.
    var processed: Int
    var seconds: Double
    var perSecond: Double
    var concurrency: Int
}

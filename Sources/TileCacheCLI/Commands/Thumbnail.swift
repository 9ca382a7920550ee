import ArgumentParser
import Foundation
import ImageCore

extension TileCacheCommand {
    /// `tilecache thumbnail FILE... --output DIR`: the service's processing on local files, as `vipsthumbnail` does.
    struct Thumbnail: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make thumbnails of local image files with the service's processing (no HTTP, no caches).",
            discussion: """
                Each FILE becomes OUTPUT/<name>.<jpg|png|webp>: upright (EXIF orientation applied), shrunk on load, \
                resized with Lanczos-3, encoded at the asked quality, exactly as `tilecache serve` makes `?w=` \
                variants. --repeat runs the whole set that many times and reports thumbnails per second, for \
                comparisons with vipsthumbnail and Pillow (docs/benchmarks.md).
                Exit codes: 0 every file made; 2 some file could not be read or processed; 1 a usage error.

                Example:
                  tilecache thumbnail photos/*.jpg --width 256 --output thumbs/ --image-format webp
                """)

        @Argument(help: "Image files (JPEG or PNG).")
        var paths: [String] = []

        @Option(name: .shortAndLong, help: "Directory the thumbnails are written to (created if missing).")
        var output: String

        @Option(name: [.customShort("w"), .long], help: "Width of the box, in pixels (1-\(ImageProcessing.maxSide)).")
        var width: Int?

        @Option(name: [.customShort("h"), .long], help: "Height of the box, in pixels (1-\(ImageProcessing.maxSide)).")
        var height: Int?

        @Option(help: "How the image fits the box when both sides are given: inside, cover or fill.")
        var fit: FitOption = .inside

        @Flag(help: "Enlarge images smaller than the box (by default they keep their size).")
        var enlarge = false

        @Option(name: [.customShort("q"), .long], help: "JPEG and WebP quality, 1-100.")
        var quality = ImageProcessing.defaultQuality

        @Option(help: "Output format: jpeg, png or webp (default: JPEG, or PNG for images with transparency).")
        var imageFormat: ImageFormatOption?

        @Option(name: [.customShort("j"), .customLong("concurrency")], help: "Files processed at once (default: the number of cores).")
        var concurrencyGiven: Int?

        /// `-j`, else the number of cores.
        var concurrency: Int { concurrencyGiven ?? ProcessInfo.processInfo.activeProcessorCount }

        @Option(help: "Process the whole set this many times (for timing); the files are written once.")
        var `repeat` = 1

        @OptionGroup var report: OutputOptions

        func validate() throws {
            guard !paths.isEmpty else { throw ValidationError("give at least one image file") }
            let sides = 1...ImageProcessing.maxSide
            for (name, value) in [("--width", width), ("--height", height)] {
                if let value, !sides.contains(value) { throw ValidationError("\(name) must be 1...\(ImageProcessing.maxSide), got \(value)") }
            }
            guard width != nil || height != nil else { throw ValidationError("give --width, --height or both") }
            guard (1...100).contains(quality) else { throw ValidationError("--quality must be 1...100, got \(quality)") }
            guard (1...256).contains(concurrency) else { throw ValidationError("--concurrency must be 1...256, got \(concurrency)") }
            guard (1...10_000).contains(`repeat`) else { throw ValidationError("--repeat must be 1...10000, got \(`repeat`)") }
        }

        func run() async throws {
            let processing = ImageProcessing(width: width, height: height, fit: fit.value, enlarge: enlarge, quality: quality,
                                             format: imageFormat?.value)
            do {
                try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
            } catch {
                throw InputError("cannot create the output directory \(output): \(error.localizedDescription)")
            }
            // Read every file first: the timing is the processing's, not the disk's.
            var inputs: [(path: String, bytes: [UInt8])] = []
            var results: [ThumbnailResult] = []
            for path in paths {
                do {
                    inputs.append((path, try LocalFile.read(path)))
                } catch {
                    results.append(ThumbnailResult(path: path, reason: error.reason.rawValue, message: "cannot read the file: \(error.message)"))
                }
            }
            let started = ContinuousClock.now
            var made: [ThumbnailResult] = []
            for round in 1...`repeat` {
                made = await Self.process(inputs, processing, concurrency: concurrency, writeTo: round == 1 ? output : nil)
            }
            let seconds = (ContinuousClock.now - started).inSeconds
            results += made
            let succeeded = made.filter { $0.reason == nil }.count
            let summary = ThumbnailSummary(files: results, processed: succeeded * `repeat`, seconds: seconds,
                                           perSecond: seconds > 0 ? Double(succeeded * `repeat`) / seconds : 0, concurrency: concurrency)
            Console.current.out(render(summary))
            if results.contains(where: { $0.reason != nil }) { throw brokenFound }
        }

        /// Processes every input, `concurrency` at a time on the blocking-work threads; writes the outputs when
        /// `directory` is given.
        static func process(_ inputs: [(path: String, bytes: [UInt8])], _ processing: ImageProcessing, concurrency: Int,
                            writeTo directory: String?) async -> [ThumbnailResult] {
            await BlockingWork.map(inputs.indices.map { $0 }, concurrency: concurrency) { index in
                thumbnail(inputs[index].path, inputs[index].bytes, processing, writeTo: directory)
            }
        }

        private static func thumbnail(_ path: String, _ bytes: [UInt8], _ processing: ImageProcessing, writeTo directory: String?) -> ThumbnailResult {
            do {
                let made = try ImageProcessor.process(bytes, processing, subject: path)
                var result = ThumbnailResult(path: path, width: made.width, height: made.height, bytes: made.bytes.count)
                if let directory {
                    let name = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
                    let target = (directory as NSString).appendingPathComponent(name + "." + (made.format == .jpeg ? "jpg" : made.format.rawValue))
                    do {
                        try Data(made.bytes).write(to: URL(fileURLWithPath: target), options: .atomic)
                        result.output = target
                    } catch {
                        return ThumbnailResult(path: path, reason: ImageCoreError.Reason.io.rawValue, message: "cannot write \(target): \(error.localizedDescription)")
                    }
                }
                return result
            } catch {
                return ThumbnailResult(path: path, reason: error.reason.rawValue, message: error.message)
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
    case jpeg, png, webp
    var value: ImageProcessing.OutputFormat { ImageProcessing.OutputFormat(rawValue: rawValue)! }
}

/// One file of `tilecache thumbnail`.
struct ThumbnailResult: Sendable, Encodable {
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
struct ThumbnailSummary: Sendable, Encodable {
    var files: [ThumbnailResult]
    /// Thumbnails made, over every round.
    var processed: Int
    var seconds: Double
    var perSecond: Double
    var concurrency: Int
}

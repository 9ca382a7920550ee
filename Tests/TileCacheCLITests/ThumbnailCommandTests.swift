import Foundation
import ImageCore
import Testing
import TestSupport
import TileCacheOrigin
@testable import TileCacheCLI

@Suite("tilecache thumbnail and orientation in inspect", .timeLimit(.minutes(5)), .heavy)
struct ThumbnailCommandTests {
    /// A real photo stored rotated, as a camera held upright writes it: EXIF orientation 6, pixels a quarter turn off.
    static func rotatedPhoto(in directory: String) throws -> String {
        let photo = try TestImages.bytes(try #require(try TestImages.photoFiles().first { $0.lastPathComponent == "rocket.jpg" }))
        let pixels = try ImageInspector().validate(photo, subject: "rocket").image  // 640x427 RGB
        // Stored for orientation 6: row 0 of the stored image is the right-hand column of the picture.
        var stored = [UInt8](repeating: 0, count: pixels.pixels.count)
        let (w, h) = (pixels.width, pixels.height)
        for y in 0..<w { for x in 0..<h { for c in 0..<3 { stored[(y * h + x) * 3 + c] = pixels.pixels[(x * w + (w - 1 - y)) * 3 + c] } } }
        let jpeg = try JPEGEncoder.encode(DecodedImage(width: h, height: w, pixelFormat: .rgb, pixels: stored), quality: 90)
        let path = directory + "/camera.jpg"
        try Data(TestImages.withEXIF(jpeg, orientation: 6, bigEndian: true)).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("inspect reports the EXIF orientation and the upright size beside the stored one")
    func inspectOrientation() async throws {
        try await withTemporaryDirectory { directory in
            let path = try Self.rotatedPhoto(in: directory)
            let run = await tilecache("inspect", path, "--format", "json")
            #expect(run.code == 0, "\(run.err)")
            let result = try #require(try run.decoded(as: [CLIJSON.FileInspection].self).first)
            #expect(result.width == 427 && result.height == 640)
            #expect(result.orientation == 6 && result.uprightWidth == 640 && result.uprightHeight == 427)
            let table = await tilecache("inspect", path)
            #expect(table.out.contains("427x640 (EXIF orientation 6: 640x427 upright)"))
        }
    }

    @Test("thumbnail takes http(s) URLs beside files: fetched, validated, named by their last path part; a broken URL is a failure with its reason")
    func urls() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let camera = try Self.rotatedPhoto(in: directory)
                let photo = origin.imagesBase + "/iron.jpg?v=2", missing = origin.imagesBase + "/unobtainium.jpg"
                let run = await tilecache("thumbnail", camera, photo, missing, "-w", "64", "-o", directory + "/out", "--format", "json")
                #expect(run.code == 2, "\(run.err)")  // the missing URL is broken
                let report = try run.decoded(as: ThumbnailOutput.self)
                let made = try #require(report.files.first { $0.path == photo })
                #expect(made.width == 64 && made.output == directory + "/out/iron.jpg" && made.reason == nil)
                let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/out/iron.jpg")))
                #expect(ImageFormat.sniff(written) == .jpeg && written.count == made.bytes)
                #expect(report.files.first { $0.path == missing }?.reason == "http-status")
                #expect(report.files.first { $0.path == camera }?.output == directory + "/out/camera.jpg")
                #expect(origin.statistics.requestsByPath.filter { $0.key.hasPrefix("/images-of-elements/iron.jpg") }.values.reduce(0, +) == 1)
            }
        }
    }

    @Test("thumbnail writes upright files in the asked size and format, reports each, and fails clearly on bad input")
    func thumbnails() async throws {
        try await withTemporaryDirectory { directory in
            let camera = try Self.rotatedPhoto(in: directory)
            try Data("<html></html>".utf8).write(to: URL(fileURLWithPath: directory + "/page.jpg"))
            let run = await tilecache("thumbnail", camera, "-w", "160", "-o", directory + "/out", "--image-format", "webp", "--format", "json")
            #expect(run.code == 0, "\(run.err)")
            let report = try run.decoded(as: ThumbnailOutput.self)
            let file = try #require(report.files.first)
            #expect(file.width == 160 && file.height == 107)  // upright: landscape
            let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/out/camera.webp")))
            #expect(ImageFormat.sniff(written) == .webp && written.count == file.bytes)
            #expect(report.processed == 1)

            let broken = await tilecache("thumbnail", camera, directory + "/page.jpg", directory + "/missing.jpg", "-w", "64", "-o", directory + "/out2")
            #expect(broken.code == 2)
            #expect(broken.out.contains("not-an-image") && broken.out.contains("missing.jpg") && broken.out.contains("camera.jpg"))
            #expect(FileManager.default.fileExists(atPath: directory + "/out2/camera.jpg"))

            let usage = await tilecache("thumbnail", camera, "-o", directory + "/out3")
            #expect(usage.code == 1 && usage.err.contains("--width, --height"))
            let tooWide = await tilecache("thumbnail", camera, "-w", "5000", "-o", directory + "/out3")
            #expect(tooWide.code == 1 && tooWide.err.contains("--width must be 1...4096"))
        }
    }

    /// The real photo rocket.jpg (640x427, 112,525 bytes).
    static func rocket() throws -> [UInt8] {
        try TestImages.bytes(try #require(try TestImages.photoFiles().first { $0.lastPathComponent == "rocket.jpg" }))
    }

    /// A PngSuite image: `basn6a08` is 32x32 RGBA (its thumbnail is a PNG), `basn2c08` 32x32 RGB (its thumbnail a JPEG).
    static func pngSuite(_ name: String) throws -> [UInt8] {
        try TestImages.bytes(TestImages.pngSuiteDirectory.appendingPathComponent(name + ".png"))
    }

    /// Writes `bytes` to `path`, creating its folders.
    static func put(_ bytes: [UInt8], at path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// The bytes of the file at `path`, nil when there is none.
    static func contents(_ path: String) -> [UInt8]? {
        (try? Data(contentsOf: URL(fileURLWithPath: path))).map { [UInt8]($0) }
    }

    @Test("an output that is an input is refused, however spelled or linked, even with --overwrite; the input keeps its bytes")
    func neverOverwritesAnInput() async throws {
        try await withTemporaryDirectory { directory in
            let original = try Self.rocket()
            let input = directory + "/ow/rocket.jpg"
            try Self.put(original, at: input)
            try FileManager.default.createSymbolicLink(atPath: directory + "/link", withDestinationPath: directory + "/ow")
            let cases: [(input: String, output: String, extra: [String], refused: String)] = [
                (input, directory + "/ow", [], directory + "/ow/rocket.jpg"),
                (directory + "/./ow/rocket.jpg", directory + "/ow", ["--overwrite"], directory + "/ow/rocket.jpg"),
                (input, directory + "/link", ["--overwrite"], directory + "/link/rocket.jpg"),
                (directory + "/link/rocket.jpg", directory + "/ow/%s.%e", [], directory + "/ow/rocket.jpg"),
            ]
            for (given, output, extra, refused) in cases {
                let run = await tilecache(["thumbnail", given, "-w", "64", "-o", output] + extra)
                #expect(run.code == 1, "\(given) -o \(output): \(run.out)")
                #expect(run.err.contains("refusing to write \(refused): it is the input \(given) itself"), "\(run.err)")
                #expect(run.err.contains("nothing was written") && run.out.isEmpty)
                #expect(Self.contents(input) == original, "\(given) -o \(output) replaced the input")
            }
        }
    }

    @Test("two inputs that map to one output are refused, naming both and the output, and nothing at all is written")
    func refusesDuplicateOutputs() async throws {
        try await withTemporaryDirectory { directory in
            let (a, b, png) = (directory + "/dup/a/x.jpg", directory + "/dup/b/x.jpg", directory + "/dup/a/x.png")
            try Self.put(try Self.rocket(), at: a)
            try Self.put(try Self.rocket(), at: b)
            try Self.put(try Self.pngSuite("basn2c08"), at: png)  // opaque: its thumbnail is a JPEG too
            for output in [directory + "/th4", directory + "/th4/%s-64.%e"] {
                let run = await tilecache("thumbnail", a, b, png, "-w", "64", "-o", output)
                let target = output.hasSuffix("%e") ? directory + "/th4/x-64.jpg" : directory + "/th4/x.jpg"
                #expect(run.code == 1 && run.out.isEmpty, "\(run.out)")
                #expect(run.err.contains("nothing was written: 2 outputs refused"), "\(run.err)")
                #expect(run.err.contains("refusing to write \(target) twice: the inputs \(a) and \(b) both map to it"), "\(run.err)")
                #expect(run.err.contains("refusing to write \(target) twice: the inputs \(a) and \(png) both map to it"), "\(run.err)")
                #expect(!FileManager.default.fileExists(atPath: directory + "/th4"), "a refused run created its output folder")
            }
            // Walking the folder keeps a/ and b/ apart, but a/x.jpg and a/x.png still meet at a/x.jpg.
            let walk = await tilecache("thumbnail", directory + "/dup", "-w", "64", "-o", directory + "/th5")
            #expect(walk.code == 1, "\(walk.out)")
            #expect(walk.err.contains("refusing to write \(directory)/th5/a/x.jpg twice: the inputs \(a) and \(png)"), "\(walk.err)")
            #expect(!FileManager.default.fileExists(atPath: directory + "/th5"))
        }
    }

    @Test("-o takes a pattern: %s the input's name, %e the output's extension, %% a %; a pattern's extension chooses the format")
    func outputPattern() async throws {
        try await withTemporaryDirectory { directory in
            try Self.put(try Self.rocket(), at: directory + "/in/rocket.jpg")
            try Self.put(try Self.pngSuite("basn6a08"), at: directory + "/in/clear.png")
            let run = await tilecache("thumbnail", directory + "/in/rocket.jpg", directory + "/in/clear.png", "-w", "64",
                                      "-o", directory + "/thumbs/%s-64.%e", "--format", "json")
            #expect(run.code == 0, "\(run.err)")
            let report = try run.decoded(as: ThumbnailSummary.self)
            #expect(report.files.map(\.output) == [directory + "/thumbs/rocket-64.jpg", directory + "/thumbs/clear-64.png"])
            #expect(ImageFormat.sniff(Self.contents(directory + "/thumbs/rocket-64.jpg") ?? []) == .jpeg)
            #expect(ImageFormat.sniff(Self.contents(directory + "/thumbs/clear-64.png") ?? []) == .png)

            let webp = await tilecache("thumbnail", directory + "/in/rocket.jpg", "-w", "64", "-o", directory + "/w/%s-100%%.webp")
            #expect(webp.code == 0, "\(webp.err)")
            #expect(ImageFormat.sniff(Self.contents(directory + "/w/rocket-100%.webp") ?? []) == .webp)

            let mistakes: [(pattern: String, extra: [String], message: String)] = [
                ("/bad/%s-%q.%e", [], "unknown %q"),
                ("/bad/%s", [], "a pattern ends in .%e"),
                ("/bad/%s.webp", ["--image-format", "png"], "ends in a webp extension but --image-format is png"),
            ]
            for (pattern, extra, message) in mistakes {
                let bad = await tilecache(["thumbnail", directory + "/in/rocket.jpg", "-w", "64", "-o", directory + pattern] + extra)
                #expect(bad.code == 1 && bad.err.contains(message), "\(pattern): \(bad.err)")
            }
            #expect(!FileManager.default.fileExists(atPath: directory + "/bad"))
        }
    }

    @Test("an existing output is refused without --overwrite and replaced with it; --overwrite never replaces an input")
    func overwriteOnlyWhatIsNotAnInput() async throws {
        try await withTemporaryDirectory { directory in
            let original = try Self.rocket()
            let (input, existing) = (directory + "/in/rocket.jpg", directory + "/out/rocket.jpg")
            try Self.put(original, at: input)
            try Self.put(Array("an older thumbnail".utf8), at: existing)

            let refused = await tilecache("thumbnail", input, "-w", "64", "-o", directory + "/out")
            #expect(refused.code == 1, "\(refused.out)")
            #expect(refused.err.contains("\(existing) already exists (the thumbnail of \(input) would replace it); pass --overwrite"),
                    "\(refused.err)")
            #expect(Self.contents(existing) == Array("an older thumbnail".utf8))

            let replaced = await tilecache("thumbnail", input, "-w", "64", "-o", directory + "/out", "--overwrite", "--format", "json")
            #expect(replaced.code == 0, "\(replaced.err)")
            let file = try #require(try replaced.decoded(as: ThumbnailSummary.self).files.first)
            let written = try #require(Self.contents(existing))
            #expect(file.output == existing && ImageFormat.sniff(written) == .jpeg && written.count == file.bytes)

            let input2 = await tilecache("thumbnail", input, "-w", "64", "-o", directory + "/in", "--overwrite")
            #expect(input2.code == 1 && input2.err.contains("it is the input \(input) itself"), "\(input2.err)")
            #expect(Self.contents(input) == original)
        }
    }

    @Test("a folder is walked as inspect walks it: its images become thumbnails in their subfolders, other files are skipped")
    func walksFolders() async throws {
        try await withTemporaryDirectory { directory in
            let photos = directory + "/photos"
            try Self.put(try Self.rocket(), at: photos + "/rocket.jpg")
            try Self.put(try Self.rocket(), at: photos + "/sub/rocket.jpg")
            try Self.put(try Self.pngSuite("basn6a08"), at: photos + "/sub/deeper/clear.png")
            try Self.put(Array("not a picture".utf8), at: photos + "/notes.jpg")
            try Self.put(try Self.rocket(), at: photos + "/.hidden.jpg")
            let run = await tilecache("thumbnail", photos + "/", "-w", "64", "-o", directory + "/out", "--format", "json")
            #expect(run.code == 0, "\(run.err)")
            let report = try run.decoded(as: ThumbnailSummary.self)
            #expect(report.files.map(\.path) == [photos + "/rocket.jpg", photos + "/sub/deeper/clear.png", photos + "/sub/rocket.jpg"])
            #expect(report.files.map(\.output) == ["/out/rocket.jpg", "/out/sub/deeper/clear.png", "/out/sub/rocket.jpg"].map { directory + $0 })
            for output in report.files.compactMap(\.output) { #expect(FileManager.default.fileExists(atPath: output), "\(output)") }
            #expect(run.err.contains(photos + "/notes.jpg: not an image") && run.err.contains(photos + "/.hidden.jpg: hidden"), "\(run.err)")
            let made = try FileManager.default.subpathsOfDirectory(atPath: directory + "/out").filter { $0.contains(".") }.sorted()
            #expect(made == ["rocket.jpg", "sub/deeper/clear.png", "sub/rocket.jpg"])

            try FileManager.default.createDirectory(atPath: directory + "/empty", withIntermediateDirectories: true)
            let empty = await tilecache("thumbnail", directory + "/empty", "-w", "64", "-o", directory + "/out2")
            #expect(empty.code == 1 && empty.err.contains("nothing to thumbnail: no image files in \(directory)/empty"), "\(empty.err)")
        }
    }

    @Test("-h is help, as in every command; the height is --height only")
    func dashHIsHelp() async throws {
        let help = await tilecache("thumbnail", "-h")
        #expect(help.code == 0 && help.out.contains("USAGE: tilecache thumbnail"), "\(help.err)")
        #expect(help.out.contains("--height <height>") && !help.out.contains("-h, --height"))
        #expect(help.out == (await tilecache("thumbnail", "--help")).out)
        try await withTemporaryDirectory { directory in
            try Self.put(try Self.rocket(), at: directory + "/rocket.jpg")
            let run = await tilecache("thumbnail", directory + "/rocket.jpg", "--height", "64", "-o", directory + "/out", "--format", "json")
            #expect(run.code == 0, "\(run.err)")
            #expect(try run.decoded(as: ThumbnailSummary.self).files.first?.height == 64)
            // -h with a number was the height once: an error naming --height, not help and a success with nothing made.
            let old = await tilecache("thumbnail", directory + "/rocket.jpg", "-w", "64", "-h", "64", "-o", directory + "/old")
            #expect(old.code == 1 && old.err.contains("-h is help, as in every command; give the height as --height 64"), "\(old.err)")
            #expect(!FileManager.default.fileExists(atPath: directory + "/old"))
        }
    }

    @Test("serve refuses bad abuse-limit options at once, naming them: signing key and salt, allowed widths, resize bounds")
    func serveLimitOptions() async throws {
        for (arguments, mention) in [(["--signing-key", "xyz"], "--signing-key/--signing-salt"),
                                     (["--signing-salt", "00"], "--signing-salt needs --signing-key"),
                                     (["--allowed-widths", "64,abc"], "'abc' is not a width"),
                                     (["--allowed-widths", "64,0"], "'0' is not a width"),
                                     (["--resize-concurrency", "0"], "--resize-concurrency must be"),
                                     (["--resize-queue=-1"], "--resize-queue must be")] {
            let run = await tilecache(["serve", "--port", "0"] + arguments)
            #expect(run.code == 1 && run.err.contains(mention), "\(arguments): \(run.err)")
        }
    }
}

/// A client's model of `thumbnail --format json` (docs/cli.md, `tilecache thumbnail`), not the command's own type.
private struct ThumbnailOutput: Decodable {
    /// One input: its thumbnail, or why there is none.
    struct File: Decodable {
        var path: String
        var output: String?
        var width: Int?
        var height: Int?
        var bytes: Int?
        var reason: String?
        var message: String?
    }

    var files: [File]
    var processed: Int
    var seconds: Double
    var perSecond: Double
    var concurrency: Int
}

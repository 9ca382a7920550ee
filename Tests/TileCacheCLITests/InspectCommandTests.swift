import Catalogue
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import ImageCore
import Testing
import TileCacheCLI
import TestSupport
import TileCacheOrigin

@Suite("tilecache inspect", .timeLimit(.minutes(5)), .heavy)
struct InspectCommandTests {
    /// A directory with a valid JPEG, a valid PNG, an HTML file named .jpg, a truncated JPEG and a hidden file.
    func makeFiles(in directory: String) throws {
        let jpeg = ImageSynthesizer(seed: 3).jpeg(ElementCatalogue.standard.element(number: 8)!, kind: .thumbnail)
        // A 1x1 RGBA PNG.
        let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")!
        try Data(jpeg).write(to: URL(fileURLWithPath: directory + "/a.jpg"))
        try png.write(to: URL(fileURLWithPath: directory + "/b.png"))
        try Data("<!DOCTYPE html><html><body>404</body></html>".utf8).write(to: URL(fileURLWithPath: directory + "/c.jpg"))
        try Data(jpeg.prefix(jpeg.count / 2)).write(to: URL(fileURLWithPath: directory + "/d.jpg"))
        try Data("x".utf8).write(to: URL(fileURLWithPath: directory + "/.hidden"))
    }

    @Test("JSON lists every file with its format, size and reason; broken files give exit code 2")
    func json() async throws {
        try await withTemporaryDirectory { directory in
            try makeFiles(in: directory)
            let run = await tilecache("inspect", directory, "--format", "json")
            #expect(run.code == 2)
            let results = try run.decoded(as: [CLIJSON.FileInspection].self)
            #expect(results.map { ($0.path as NSString).lastPathComponent } == ["a.jpg", "b.png", "c.jpg", "d.jpg"])
            #expect(results.map(\.valid) == [true, true, false, false])
            #expect(results[0].format == "jpeg" && results[1].format == "png")
            #expect(results[1].width == 1 && results[1].height == 1)
            #expect(results[2].reason == "not-an-image")
            #expect(results[3].reason == "truncated")
            // Absent values are written as null, not left out.
            let raw = try run.decoded(as: [JSONValue].self)
            #expect(raw[2]["format"] == .null && raw[0]["reason"] == .null)
            #expect(raw.allSatisfy { $0.keys?.isSuperset(of: ["path", "valid", "format", "width", "height", "bytes", "reason"]) == true })
            #expect(run.err == "skipped 1 entry:\n  \(directory)/.hidden: hidden\n")
        }
    }

    @Test("all valid files give exit code 0 and a table")
    func allValid() async throws {
        try await withTemporaryDirectory { directory in
            try makeFiles(in: directory)
            let run = await tilecache("inspect", directory + "/a.jpg", directory + "/b.png")
            #expect(run.code == 0)
            #expect(run.out.contains("PATH") && run.out.contains("2 files: 2 valid, 0 invalid"))
            let markdown = await tilecache("inspect", directory + "/a.jpg", "--format", "markdown")
            #expect(markdown.out.hasPrefix("| PATH | VALID |"))
        }
    }

    @Test("a missing path among several is a not-found row; everything else is still checked; exit code 2")
    func missingPath() async throws {
        try await withTemporaryDirectory { directory in
            try makeFiles(in: directory)
            let run = await tilecache("inspect", directory + "/a.jpg", "/no/such/file.jpg", directory + "/b.png", "--format", "json")
            #expect(run.code == 2)
            let results = try run.decoded(as: [CLIJSON.FileInspection].self)
            #expect(results.map(\.path) == [directory + "/a.jpg", "/no/such/file.jpg", directory + "/b.png"])
            #expect(results.map(\.valid) == [true, false, true])
            #expect(results[1].reason == "not-found" && results[1].message == "no such file or directory")
            let table = await tilecache("inspect", "/no/such/file.jpg", directory + "/a.jpg")
            #expect(table.code == 2 && table.out.contains("not-found: no such file or directory"))
            #expect(table.out.contains("2 files: 1 valid, 1 invalid"))
        }
    }

    @Test("symbolic links to files and folders are followed, link cycles end, and what is skipped is named")
    func linksAndSkipped() async throws {
        try await withTemporaryDirectory { directory in
            try makeFiles(in: directory)
            let manager = FileManager.default
            try manager.createDirectory(atPath: directory + "/sub", withIntermediateDirectories: true)
            try manager.createSymbolicLink(atPath: directory + "/sub/link.jpg", withDestinationPath: "../a.jpg")
            try manager.createSymbolicLink(atPath: directory + "/sub/up", withDestinationPath: "..")
            try manager.createSymbolicLink(atPath: directory + "/sub/gone.jpg", withDestinationPath: directory + "/nothing-here")
            #expect(mkfifo(directory + "/sub/pipe", 0o644) == 0)
            let run = await tilecache("inspect", directory, "--format", "json")
            #expect(run.code == 2)  // c.jpg and d.jpg are broken
            let results = try run.decoded(as: [CLIJSON.FileInspection].self)
            #expect(results.map { $0.path.dropFirst(directory.count) }
                    == ["/a.jpg", "/b.png", "/c.jpg", "/d.jpg", "/sub/link.jpg"])
            #expect(results[4].valid == true)
            for (path, why) in [("/.hidden", "hidden"), ("/sub/gone.jpg", "a broken symbolic link"), ("/sub/pipe", "not a regular file"),
                                ("/sub/up", "a link back to a directory it is inside (cycle)")] {
                #expect(run.err.contains("  \(directory)\(path): \(why)\n"), "\(path)")
            }
            #expect(run.err.hasPrefix("skipped 4 entries:\n"))
        }
    }

    @Test("an empty folder is nothing to check: exit code 1, unless --allow-empty")
    func emptyFolder() async throws {
        try await withTemporaryDirectory { directory in
            try Data("x".utf8).write(to: URL(fileURLWithPath: directory + "/.only-hidden"))
            let run = await tilecache("inspect", directory)
            #expect(run.code == 1 && run.out.isEmpty)
            #expect(run.err.contains("nothing to check: no files in \(directory)") && run.err.contains("--allow-empty"))
            #expect(!run.err.contains("Usage:"))
            let allowed = await tilecache("inspect", directory, "--allow-empty", "--format", "json")
            #expect(allowed.code == 0)
            #expect(try allowed.decoded(as: [JSONValue].self).isEmpty)
        }
    }

    @Test("""
        a disk cache or its entries directory is never searched: alone it is a usage error (exit 1) naming it and \
        stats --verify; beside other paths, or inside a folder searched, it is skipped with that notice
        """)
    func diskCacheDirectory() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let cache = directory + "/c"
                let prefetch = await tilecache(["prefetch", "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase,
                                                "--elements", "1-3", "--cache-dir", cache, "--format", "json"])
                #expect(prefetch.code == 0)
                let notice = "\(cache) is a TileCache disk cache: use `tilecache stats --verify --cache-dir \(cache)` to check its entries"
                let alone = await tilecache("inspect", cache)
                #expect(alone.code == 1 && alone.out.isEmpty && !alone.err.contains("Usage:"))
                #expect(alone.err.contains(notice + "\n") && !alone.err.contains(".tce"), "\(alone.err)")
                let entries = await tilecache("inspect", cache + "/entries/", "--allow-empty")
                #expect(entries.code == 1 && entries.out.isEmpty)
                #expect(entries.err.contains("""
                    \(cache)/entries/ is the entries directory of the TileCache disk cache \(cache): use `tilecache stats --verify \
                    --cache-dir \(cache)` to check its entries
                    """), "\(entries.err)")
                // What the notice suggests works.
                let verify = await tilecache("stats", "--verify", "--cache-dir", cache)
                #expect(verify.code == 0, "\(verify.err)")

                try makeFiles(in: directory)
                let beside = await tilecache("inspect", cache, directory + "/a.jpg", "--format", "json")
                #expect(beside.code == 0)
                #expect(beside.err.contains("\(cache) is a TileCache disk cache, skipped: use `tilecache stats --verify --cache-dir \(cache)`"))
                #expect(try beside.decoded(as: [CLIJSON.FileInspection].self).map(\.path) == [directory + "/a.jpg"])

                let inside = await tilecache("inspect", directory, "--format", "json")
                #expect(inside.code == 2)  // c.jpg and d.jpg are broken; nothing of the cache is listed
                let results = try inside.decoded(as: [CLIJSON.FileInspection].self)
                #expect(results.map { $0.path.dropFirst(directory.count) } == ["/a.jpg", "/b.png", "/c.jpg", "/d.jpg"])
                #expect(inside.err.contains("\(cache) is a TileCache disk cache, skipped: use"), "\(inside.err)")

                // A path the shell would split is quoted in the command suggested.
                try FileManager.default.moveItem(atPath: cache, toPath: directory + "/my cache")
                let spaced = await tilecache("inspect", directory + "/my cache")
                #expect(spaced.code == 1 && spaced.err.contains("--cache-dir '\(directory)/my cache'`"), "\(spaced.err)")
            }
        }
    }

    @Test("a WebP that thumbnail wrote is valid, with its format and size; a cut copy is truncated (exit 2)")
    func webpFromThumbnail() async throws {
        try await withTemporaryDirectory { directory in
            let jpeg = ImageSynthesizer(seed: 3).jpeg(ElementCatalogue.standard.element(number: 8)!, kind: .thumbnail)
            try Data(jpeg).write(to: URL(fileURLWithPath: directory + "/o.jpg"))
            let made = await tilecache("thumbnail", directory + "/o.jpg", "--width", "48", "--image-format", "webp", "-o", directory + "/out")
            #expect(made.code == 0, "\(made.err)")
            let webp = try Data(contentsOf: URL(fileURLWithPath: directory + "/out/o.webp"))
            try webp.prefix(webp.count - 10).write(to: URL(fileURLWithPath: directory + "/cut.webp"))
            let run = await tilecache("inspect", directory + "/out/o.webp", directory + "/cut.webp", "--format", "json")
            #expect(run.code == 2)
            let results = try run.decoded(as: [CLIJSON.FileInspection].self)
            #expect(results.map(\.valid) == [true, false])
            #expect(results.allSatisfy { $0.format == "webp" && $0.width == 48 })
            #expect(try run.decoded(as: [JSONValue].self)[0]["reason"] == .null)  // present, as null
            #expect(results[1].reason == "truncated")
            #expect(results[1].message == "WebP ends early: its RIFF header declares \(webp.count) bytes, the file holds \(webp.count - 10)")
        }
    }

    @Test("no path or a bad option is a usage error: exit code 1, message on stderr")
    func usageErrors() async {
        let none = await tilecache("inspect")
        #expect(none.code == 1 && none.err.contains("at least one file"))
        let badFormat = await tilecache("inspect", "x", "--format", "yaml")
        #expect(badFormat.code == 1 && badFormat.err.contains("yaml"))
    }

    @Test("--placeholders: each valid file's placeholder, the library's for the same bytes; none for an invalid file")
    func placeholders() async throws {
        struct Row: Decodable {
            struct Placeholder: Decodable, Equatable { var blurhash: String, thumbhash: String, dominant_color: String, lqip: String }
            var path: String, valid: Bool, placeholder: Placeholder?
        }
        let photo = try #require(try TestImages.photoFiles().first { $0.lastPathComponent == "rocket.jpg" })
        try await withTemporaryDirectory { directory in
            let broken = directory + "/broken.jpg"
            try Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 4]).write(to: URL(fileURLWithPath: broken))
            let run = await tilecache("inspect", "--placeholders", "--format", "json", photo.path, broken)
            #expect(run.code == 2, "\(run.err)")
            let rows = try JSONDecoder().decode([Row].self, from: Data(run.out.utf8))
            let made = try ImageProcessor.process(try TestImages.bytes(photo), .placeholder(of: .none), subject: "rocket")
            let expected = try #require(ImagePlaceholder(json: made.bytes))
            let row = try #require(rows.first { $0.path == photo.path })
            #expect(row.placeholder == Row.Placeholder(blurhash: expected.blurhash, thumbhash: expected.thumbhash,
                                                       dominant_color: expected.dominantColor, lqip: expected.lqip))
            #expect(rows.first { $0.path == broken }.map { !$0.valid && $0.placeholder == nil } == true)
            let table = await tilecache("inspect", "--placeholders", photo.path)
            #expect(table.code == 0 && table.out.contains("BLURHASH") && table.out.contains(expected.blurhash))
        }
    }

    @Test("--placeholders judges every file as inspect alone does (one decode is both): validity, reason, message, size and warnings, strict and --lenient")
    func placeholdersJudgeAsInspect() async throws {
        struct Row: Decodable, Equatable {
            var path: String, valid: Bool, format: String?, width: Int?, height: Int?, reason: String?, message: String?, warnings: [String]?
        }
        try await withTemporaryDirectory { directory in
            try makeFiles(in: directory)
            // A real photo with an Adobe RGB profile, cut short (lenient: valid with a warning; strict: truncated), and
            // the photo with bytes after its end; the synthesized JPEG with a profile that cannot be used, and with an
            // ICC chunk numbered 2 of 1 (libjpeg warns of a bad ICC marker when a colour-managed decode reads it).
            let rocket = try TestImages.bytes(try #require(try TestImages.photoFiles().first { $0.lastPathComponent == "rocket.jpg" }))
            try Data(rocket.prefix(rocket.count * 2 / 3)).write(to: URL(fileURLWithPath: directory + "/e.jpg"))
            try Data(rocket + [UInt8](repeating: 0x41, count: 100)).write(to: URL(fileURLWithPath: directory + "/f.jpg"))
            let plain = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/a.jpg")))
            try Data(TestImages.withICC(plain, profile: [UInt8](repeating: 7, count: 300))).write(to: URL(fileURLWithPath: directory + "/g.jpg"))
            let badChunk = Array("ICC_PROFILE".utf8) + [0, 2, 1] + [UInt8](repeating: 7, count: 40)
            try Data([0xFF, 0xD8, 0xFF, 0xE2, 0, UInt8(badChunk.count + 2)] + badChunk + plain.dropFirst(2))
                .write(to: URL(fileURLWithPath: directory + "/h.jpg"))
            for lenient in [false, true] {
                let options = ["--format", "json"] + (lenient ? ["--lenient"] : [])
                let alone = await tilecache(["inspect", directory] + options)
                let with = await tilecache(["inspect", directory, "--placeholders"] + options)
                #expect(alone.code == with.code, "\(with.err)")
                let expected = try JSONDecoder().decode([Row].self, from: Data(alone.out.utf8))
                #expect(expected.count == 8 && expected.contains { $0.path.hasSuffix("e.jpg") && $0.valid == lenient })
                #expect(try JSONDecoder().decode([Row].self, from: Data(with.out.utf8)) == expected)
            }
        }
    }

    @Test("--help shows an example and exits 0")
    func help() async {
        let run = await tilecache("inspect", "--help")
        #expect(run.code == 0 && run.out.contains("Example") && run.out.contains("tilecache inspect"))
    }
}

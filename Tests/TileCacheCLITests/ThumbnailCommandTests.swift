import Foundation
import ImageCore
import Testing
import TestSupport
import TileCacheCLI

@Suite("tilecache thumbnail and orientation in inspect")
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
            let result = try #require((try run.json() as? [[String: Any]])?.first)
            #expect(result["width"] as? Int == 427 && result["height"] as? Int == 640)
            #expect(result["orientation"] as? Int == 6 && result["uprightWidth"] as? Int == 640 && result["uprightHeight"] as? Int == 427)
            let table = await tilecache("inspect", path)
            #expect(table.out.contains("427x640 (EXIF orientation 6: 640x427 upright)"))
        }
    }

    @Test("thumbnail writes upright files in the asked size and format, reports each, and fails clearly on bad input")
    func thumbnails() async throws {
        try await withTemporaryDirectory { directory in
            let camera = try Self.rotatedPhoto(in: directory)
            try Data("<html></html>".utf8).write(to: URL(fileURLWithPath: directory + "/page.jpg"))
            let run = await tilecache("thumbnail", camera, "-w", "160", "-o", directory + "/out", "--image-format", "webp", "--format", "json")
            #expect(run.code == 0, "\(run.err)")
            let report = try #require(try run.json() as? [String: Any])
            let file = try #require((report["files"] as? [[String: Any]])?.first)
            #expect(file["width"] as? Int == 160 && file["height"] as? Int == 107)  // upright: landscape
            let written = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/out/camera.webp")))
            #expect(ImageFormat.sniff(written) == .webp && written.count == file["bytes"] as? Int)
            #expect(report["processed"] as? Int == 1)

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

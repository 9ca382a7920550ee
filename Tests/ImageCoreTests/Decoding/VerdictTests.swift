import Foundation
import ImageCore
import NIOConcurrencyHelpers
import Testing
import TestSupport
import TileCacheOrigin

/// What a validation says about some bytes: everything a report shows.
struct Verdict: Equatable, CustomStringConvertible {
    var valid: Bool
    var reason: ImageCoreError.Reason?
    var message: String?
    var width: Int?
    var height: Int?
    var warnings: [String]

    /// The verdict of `tilecache inspect`: the validation check, and on failure the header's size when it reads.
    init(of bytes: [UInt8], inspector: ImageInspector = ImageInspector(), subject: String = "file") {
        do {
            let checked = try inspector.check(bytes, subject: subject)
            (valid, reason, message, warnings) = (true, nil, nil, checked.warnings)
            (width, height) = (checked.header.width, checked.header.height)
        } catch {
            (valid, reason, message, warnings) = (false, error.reason, error.message, [])
            let header = try? inspector.inspectHeader(bytes, subject: subject)
            (width, height) = (header?.width, header?.height)
        }
    }

    var description: String {
        valid ? "valid \(width ?? 0)x\(height ?? 0) \(warnings)" : "\(reason?.rawValue ?? "?"): \(message ?? "")"
    }
}

@Suite("verdicts depend only on the bytes", .timeLimit(.minutes(5)), .heavy)
struct VerdictTests {
    /// The verdict corpus (empty if the fixtures cannot be read, which `corpusIsWhole` reports).
    static let corpus: [TestImages.File] = (try? TestImages.verdictCorpus()) ?? []

    @Test("the corpus holds photos, every quirk of each, PngSuite and the origin's forms")
    func corpusIsWhole() throws {
        let photos = try TestImages.photoFiles()
        #expect(photos.count == 5)
        #expect(Self.corpus.count >= photos.count * (1 + JPEGQuirk.all.count) + 170)
        for quirk in JPEGQuirk.all {
            // junk-before-app needs an APP segment after the first, which retina.jpg and grace_hopper.jpg lack.
            let expected = quirk.name == "junk-before-app" ? photos.count - 2 : photos.count
            #expect(Self.corpus.filter { $0.name.hasPrefix("quirk-\(quirk.name)-") }.count == expected, "\(quirk.name)")
        }
    }

    @Test("every photo and every quirk of it gets its expected strict verdict",
          arguments: corpus.filter { $0.expected != nil }.map(\.name))
    func expectedVerdict(name: String) throws {
        let file = try #require(Self.corpus.first { $0.name == name })
        let verdict = Verdict(of: file.bytes, subject: name)
        switch file.expected! {
        case .valid:
            #expect(verdict.valid && verdict.warnings.isEmpty, "\(verdict)")
        case .validWithWarning:
            #expect(verdict.valid && !verdict.warnings.isEmpty, "\(verdict)")
        case .truncated:
            #expect(verdict.reason == .truncated, "\(verdict)")
        case .corrupt:
            #expect(verdict.reason == .corrupt, "\(verdict)")
        }
        if file.expected == .valid || file.expected == .validWithWarning {
            // The full decode (what the pipeline stores) agrees, at the size the header declares.
            let full = try ImageInspector().validate(file.bytes, subject: name)
            #expect(full.image.width == verdict.width && full.image.height == verdict.height)
            #expect(full.warnings == verdict.warnings)
        }
    }

    @Test("a quirk's warning names what is wrong")
    func warningsSayWhat() throws {
        let rocket = try TestImages.bytes(try TestImages.photoFiles().first { $0.lastPathComponent == "rocket.jpg" }!)
        func warnings(_ quirk: String) -> [String] { Verdict(of: JPEGQuirk.named(quirk)!.apply(to: rocket)!).warnings }
        #expect(warnings("junk-before-dqt") == ["Corrupt JPEG data: 4 extraneous bytes before marker 0xdb"])
        #expect(warnings("junk-before-app") == ["Corrupt JPEG data: 4 extraneous bytes before marker 0xe2"])
        #expect(warnings("app-length-3-short") == ["Corrupt JPEG data: 3 extraneous bytes before marker 0xe2"])
        #expect(warnings("exif-damaged-tiff-header") == ["EXIF data ignored: the TIFF header does not start with II or MM"])
        #expect(warnings("fill-bytes-before-dqt").isEmpty)
    }

    @Test("a header that fails fatally leaves nothing behind for the next image (was: a stale 'Bogus marker length')")
    func fatalHeaderThenValid() throws {
        let photos = try TestImages.photoFiles().map(TestImages.bytes)
        let broken = JPEGQuirk.named("bogus-dht-length")!.apply(to: photos[0])!
        let alone = photos.map { Verdict(of: $0) }
        // On one thread, every second image is the broken one: a decoder reused after its failure would poison the next.
        for _ in 0..<3 {
            for (photo, expected) in zip(photos, alone) {
                #expect(Verdict(of: broken).reason == .corrupt)
                #expect(Verdict(of: photo) == expected)
                #expect(try ImageInspector().inspectHeader(photo, subject: "p").width == expected.width)
            }
        }
    }

    @Test("a harmless header warning is a warning, in the header read too (was: 'JPEG header unreadable')")
    func headerWarningHonoured() throws {
        let rocket = try TestImages.bytes(try TestImages.photoFiles().first { $0.lastPathComponent == "rocket.jpg" }!)
        let quirky = JPEGQuirk.named("junk-before-dqt")!.apply(to: rocket)!
        let header = try ImageInspector().inspectHeader(quirky, subject: "q")
        #expect(header.width == 640 && header.height == 427)
        #expect(try ImageProcessor.process(quirky, ImageProcessing(width: 64), subject: "q").width == 64)
    }

    @Test("damage after a harmless warning is still found (libjpeg alone shows only a read's first warning)")
    func damageAfterHarmlessWarning() throws {
        let rocket = try TestImages.bytes(try TestImages.photoFiles().first { $0.lastPathComponent == "rocket.jpg" }!)
        let quirky = JPEGQuirk.named("junk-before-dqt")!.apply(to: rocket)!
        let cut = Array(quirky.prefix(quirky.count / 2))
        #expect(Verdict(of: cut).reason == .truncated)
        let flipped = JPEGQuirk.named("junk-before-dqt")!.apply(to: JPEGQuirk.named("flipped-scan-bytes-at-50-percent")!.apply(to: rocket)!)!
        #expect(Verdict(of: flipped).reason == .corrupt)
        let lenient = try ImageInspector(strictness: .lenient).validate(cut, subject: "cut")
        #expect(lenient.warnings == ["Corrupt JPEG data: 4 extraneous bytes before marker 0xdb", "Premature end of JPEG file",
                                     "Corrupt JPEG data: premature end of data segment"])
    }

    @Test("bytes left over once a scan decoded are damage in strict mode, a warning in lenient mode")
    func leftoverScanBytes() throws {
        var bytes = Fixtures.thumbnailJPEG
        bytes.insert(contentsOf: [0x12, 0x34, 0x56], at: bytes.count - 2)
        // (libjpeg counts only the bytes its bit reader had not fetched yet, so fewer than were inserted.)
        let strict = Verdict(of: bytes)
        #expect(strict.reason == .corrupt)
        #expect(strict.message?.hasPrefix("JPEG data damaged: Corrupt JPEG data: ") == true)
        #expect(strict.message?.hasSuffix(" extraneous bytes before marker 0xd9") == true)
        let lenient = try ImageInspector(strictness: .lenient).validate(bytes, subject: "extra")
        #expect(lenient.warnings.count == 1 && lenient.warnings[0].hasSuffix(" extraneous bytes before marker 0xd9"))
    }

    @Test("real photos decode to exactly the pixels of libjpeg-turbo's djpeg", arguments: [
        // `djpeg -ppm FILE` (libjpeg-turbo 2.1.5), SHA-256 of the pixel data after the PPM header.
        ("china.jpg", 640, 427, "e701459344fd69797154c91add3bb5d70e5ed1a61d8bed889bab3a796104698d"),
        ("grace_hopper.jpg", 512, 600, "f7f982de68dd296af67ee51b2a95a2e5658f7bf064c6536520b66bae8d01fc34"),
        ("hubble_deep_field.jpg", 1000, 872, "9a3ea9548188f81e63435188456e74de45a981ebeb791e265abe79a26d3b528b"),
        ("retina.jpg", 1411, 1411, "3670e389d0dae9f755cc1bb7e4da4c3d2cdf10eba2dc3060836d8d4b8024d860"),
        ("rocket.jpg", 640, 427, "3d4435cc745752b7f9724df88c6e18817de3ce7e3d2d71c55f85f7831e68f197"),
    ])
    func pixelsMatchDjpeg(name: String, width: Int, height: Int, sha256: String) throws {
        let url = try #require(try TestImages.photoFiles().first { $0.lastPathComponent == name })
        let validated = try ImageInspector().validate(try TestImages.bytes(url), subject: name)
        #expect(validated.image.width == width && validated.image.height == height && validated.image.pixelFormat == .rgb)
        let digest = DiskCache.sha256Hex(validated.image.pixels)
        #expect(digest == sha256)
    }

    /// The differential test: each file's verdict alone (a fresh inspector, nothing judged before it), then
    /// 10,240 verdicts in seeded random orders on 1 to 16 threads at once, each equal to the file's lone verdict.
    ///
    /// The work runs on `BlockingWork.runLongCPUWork`'s thread, not on a cooperative one: seconds of it there (its
    /// waiting for its own threads included) held one of the two cooperative threads the rest of the suite shares.
    @Test("10,000 verdicts in random orders on 1 to 16 threads each equal the file's lone verdict")
    func differential() async throws {
        let corpus = Self.corpus
        let (judged, mismatches) = await BlockingWork.runLongCPUWork { () -> (Int, [(threads: Int, [String])]) in
            let alone = corpus.map { Verdict(of: $0.bytes, inspector: ImageInspector(), subject: $0.name) }
            var random = SplitMix64(seed: 13)
            var judged = 0
            var mismatches: [(threads: Int, [String])] = []
            for threads in 1...16 {
                let order = (0..<640).map { _ in Int.random(in: 0..<corpus.count, using: &random) }
                mismatches.append((threads, Self.judge(order, corpus: corpus, threads: threads, expected: alone)))
                judged += order.count
            }
            return (judged, mismatches)
        }
        for (threads, found) in mismatches {
            #expect(found.isEmpty, "\(threads) threads: \(found.prefix(5))")
        }
        #expect(judged >= 10_000)
    }

    /// Judges `corpus[order[i]]` for every i on `threads` OS threads pulling from one queue; returns the mismatches.
    static func judge(_ order: [Int], corpus: [TestImages.File], threads: Int, expected: [Verdict]) -> [String] {
        let next = NIOLockedValueBox(0)
        let mismatches = NIOLockedValueBox<[String]>([])
        let done = DispatchGroup()
        for _ in 0..<threads {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                while true {
                    let position = next.withLockedValue { value -> Int in defer { value += 1 }; return value }
                    guard position < order.count else { return }
                    let file = corpus[order[position]]
                    let verdict = Verdict(of: file.bytes, subject: file.name)
                    if verdict != expected[order[position]] {
                        mismatches.withLockedValue { $0.append("\(file.name): \(verdict) instead of \(expected[order[position]])") }
                    }
                }
            }
        }
        done.wait()
        return mismatches.withLockedValue { $0 }
    }
}

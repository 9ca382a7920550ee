import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing
import TileCacheCLI
import TestSupport
import TileCacheOrigin

@Suite("tilecache validate and prefetch --extract", .timeLimit(.minutes(5)), .heavy)
struct ExtractCommandTests {
    @Test("each image is checked once; every result names each document and line that uses it; a missing file: image is broken")
    func validateDocument() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let page = directory + "/page.html"
                try """
                    <html><head><link rel="icon" href="\(origin.imagesBase)/iron.jpg"></head><body>
                    <img src="\(origin.imagesBase)/iron.jpg">
                    <img src="\(origin.imagesBase)/no-such-element.jpg">
                    <img src="img/missing.png">
                    </body></html>
                    """.write(toFile: page, atomically: true, encoding: .utf8)
                let run = await tilecache(["validate", "--extract", page, "--format", "json"])
                #expect(run.code == 2, "\(run.err)")
                let report = try run.decoded(as: URLValidationReport.self)
                #expect(report.checked == 3 && report.ok == 1 && report.broken == 2)
                let iron = try #require(report.results.first { $0.url.hasSuffix("/iron.jpg") })
                #expect(iron.ok && iron.usedIn == [ImageUse(document: page, line: 1), ImageUse(document: page, line: 2)])
                let missing = try #require(report.results.first { $0.url.hasSuffix("/no-such-element.jpg") })
                #expect(!missing.ok && missing.status == 404 && missing.usedIn == [ImageUse(document: page, line: 3)])
                let local = try #require(report.results.first { $0.url.hasPrefix("file:") })
                #expect(!local.ok && local.reason == "io" && local.url.hasSuffix("/img/missing.png"))

                let text = await tilecache(["validate", "--extract", page])
                #expect(text.out.contains("Broken images, where they are used:"))
                #expect(text.out.contains("\(page):3: \(origin.imagesBase)/no-such-element.jpg: http-status"))
            }
        }
    }

    @Test("a URL document is fetched, read as the Content-Type says, and its relative references resolve against its URL")
    func urlDocument() async throws {
        try await withOrigin { origin in
            // No extension, and first bytes that sniff as Markdown: only the Content-Type says HTML, where <base> counts.
            let html = "<base href=\"/assets/\">\n<img src=\"\(origin.imagesBase)/iron.jpg\">\n<img src=\"img/missing.png\">\n"
            // A page on the web naming this machine's files: never read (review of issue 34).
            let prying = "<img src=\"file:///etc/hostname\">\n"

            let router = Router()
            router.get("docs/page") { _, _ -> Response in
                Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: html)))
            }
            router.get("docs/prying") { _, _ -> Response in
                Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: prying)))
            }
            try await Application(router: router).test(.live) { client in
                let document = "http://127.0.0.1:\(try #require(client.port))/docs/page"
                let run = await tilecache(["validate", "--extract", document, "--format", "json"])
                #expect(run.code == 2, "\(run.err)")
                let report = try run.decoded(as: URLValidationReport.self)
                #expect(report.results.map(\.url) == [origin.imagesBase + "/iron.jpg", "http://127.0.0.1:\(try #require(client.port))/assets/img/missing.png"])
                #expect(report.results.map(\.ok) == [true, false] && report.results.last?.status == 404)
                #expect(report.results.last?.usedIn == [ImageUse(document: document, line: 3)])

                let pried = await tilecache(["validate", "--extract", "http://127.0.0.1:\(try #require(client.port))/docs/prying", "--format", "json"])
                let result = try pried.decoded(as: URLValidationReport.self).results.first
                #expect(pried.code == 2 && result?.reason == "invalid-input" && result?.bytes == nil, "\(pried.out)")
                let device = await tilecache(["validate", "--extract", "/dev/zero"])
                #expect(device.code == 1 && device.err.contains("not a regular file"), "\(device.err)")

                let missing = await tilecache(["validate", "--extract", document + "-gone"])
                #expect(missing.code == 1 && missing.err.contains("\(document)-gone: cannot fetch the document: HTTP 404"), "\(missing.err)")
            }
        }
    }

    @Test("--dump lists references with document, line and context, and fetches nothing")
    func dump() async throws {
        try await withTemporaryDirectory { directory in
            let readme = directory + "/README.md"
            try "# T\n\n![a](http://127.0.0.1:9/a.png)\n\n<img src=\"b.png\">\n".write(toFile: readme, atomically: true, encoding: .utf8)
            let run = await tilecache(["validate", "--extract", readme, "--base", "https://example.org/docs/", "--dump", "--format", "json"])
            #expect(run.code == 0, "\(run.err)")
            let references = try #require(try run.decoded(as: JSONValue.self)["references"]?.array)
            #expect(references.map { $0["url"]?.string } == ["http://127.0.0.1:9/a.png", "https://example.org/docs/b.png"])
            #expect(references.map { $0["context"]?.string } == ["markdown image", "img src"])
            #expect(references.map { $0["line"] } == [.number(3), .number(5)])
        }
    }

    @Test("--extract with --urls or catalogue options, and --json-path or --dump without --extract, are usage errors")
    func conflicts() async throws {
        let withURLs = await tilecache(["validate", "--extract", "a.md", "--urls", "list.txt"])
        #expect(withURLs.code == 1 && withURLs.err.contains("--extract takes the images from documents, so --urls would be ignored"))
        let withElements = await tilecache(["prefetch", "--extract", "a.md", "--elements", "Fe"])
        #expect(withElements.code == 1 && withElements.err.contains("so --elements would be ignored"))
        let orphan = await tilecache(["validate", "--json-path", "photos[].img_src"])
        #expect(orphan.code == 1 && orphan.err.contains("--json-path applies to the documents of --extract"))
        let dump = await tilecache(["validate", "--dump"])
        #expect(dump.code == 1 && dump.err.contains("--dump lists the images of --extract's documents"))
        let unreadable = await tilecache(["validate", "--extract", "/no/such/document.md"])
        #expect(unreadable.code == 1 && unreadable.err.contains("/no/such/document.md: cannot read the document"))
    }

    @Test("prefetch --extract with --json-path warms the rover-style answer's photos; a failure names where it is used")
    func prefetchRoverAnswer() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let answer = directory + "/photos.json"
                try """
                    {"photos": [
                      {"id": 1, "img_src": "\(origin.imagesBase)/iron.jpg", "camera": {"name": "FHAZ"}},
                      {"id": 2, "img_src": "\(origin.imagesBase)/gold.jpg"},
                      {"id": 3, "img_src": "\(origin.imagesBase)/no-such-element.jpg"}
                    ], "links": {"self": "\(origin.imagesBase)/not-a-photo.jpg"}}
                    """.write(toFile: answer, atomically: true, encoding: .utf8)
                let run = await tilecache(["prefetch", "--extract", answer, "--json-path", "photos[].img_src",
                                           "--cache-dir", directory + "/cache", "--format", "json"])
                #expect(run.code == 2, "\(run.err)")
                let report = try run.decoded(as: PrefetchReport.self)
                #expect(report.requested == 3 && report.succeeded == 2 && report.failed == 1)
                #expect(report.failures.first?.usedIn == [ImageUse(document: answer, line: 4)])
            }
        }
    }
}

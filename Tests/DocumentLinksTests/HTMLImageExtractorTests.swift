import DocumentLinks
import Testing

@Suite("HTML pages")
struct HTMLImageExtractorTests {
    @Test("img src and srcset, picture sources, icons and image metas, with the line each tag starts on")
    func everyKindOfReference() throws {
        let html = """
            <!doctype html>
            <html><head>
            <link rel="icon" href="/favicon.ico">
            <link rel="apple-touch-icon" href="touch.png"><link rel="stylesheet" href="site.css">
            <meta property="og:image" content="https://cdn.example.org/og.jpg">
            <meta name="twitter:image" content="tw.jpg">
            </head><body>
            <img
              alt="multi-line"
              src="a.png">
            <picture><source srcset="b.webp 1x, b@2x.webp 2x"><img src="b.jpg"></picture>
            </body></html>
            """
        let found = try references(html, .html)
        #expect(urlsAndLines(found) == [
            "https://example.org/favicon.ico@3", "https://example.org/docs/touch.png@4", "https://cdn.example.org/og.jpg@5",
            "https://example.org/docs/tw.jpg@6", "https://example.org/docs/a.png@8", "https://example.org/docs/b.webp@11",
            "https://example.org/docs/b@2x.webp@11", "https://example.org/docs/b.jpg@11",
        ])
        #expect(found.map(\.context) == ["link icon", "link apple-touch-icon", "meta og:image", "meta twitter:image", "img src",
                                         "source srcset", "source srcset", "img src"])
    }

    @Test("srcset URLs may contain commas, as the HTML standard parses them")
    func srcsetWithCommas() throws {
        let html = #"<img srcset="https://img.example/c_fill,w_100/x.jpg 100w, https://img.example/c_fill,w_200/x.jpg 200w,y.png">"#
        #expect(try references(html, .html).map(\.url) == [
            "https://img.example/c_fill,w_100/x.jpg", "https://img.example/c_fill,w_200/x.jpg", "https://example.org/docs/y.png",
        ])
    }

    @Test("relative references resolve against <base href>, itself resolved against the page")
    func baseHref() throws {
        let html = "<head><base href=\"../assets/\"></head><body><img src=\"i.png\"><img src=\"/root.png\"></body>"
        #expect(try references(html, .html).map(\.url) == ["https://example.org/assets/i.png", "https://example.org/root.png"])
    }

    @Test("style attributes and <style> elements are read as CSS, with their lines")
    func styles() throws {
        let html = "<style>\n/* url(no.png) */\nbody { background: url('bg.png') }\n</style>\n<div style=\"background-image: url(d.png)\"></div>"
        let found = try references(html, .html)
        #expect(urlsAndLines(found) == ["https://example.org/docs/bg.png@3", "https://example.org/docs/d.png@5"])
        #expect(found.map(\.context) == ["css url()", "style url()"])
    }

    @Test("data:, javascript: and empty values are skipped; data: URIs are counted")
    func skipped() throws {
        let result = try images("<img src=\"data:image/png;base64,AAAA\"><img src=\"javascript:void(0)\"><img src=\" \"><img src=\"ok.png\">", .html)
        #expect(result.references.map(\.url) == ["https://example.org/docs/ok.png"])
        #expect(result.dataURIsSkipped == 1)
    }

    @Test("lines past 65535 are right (libxml2 2.9.14's HTML parser stops counting there; the scanner does not)")
    func bigLines() throws {
        let html = String(repeating: "<p>x</p>\n", count: 70_000) + "<img src=\"late.png\">"
        #expect(try references(html, .html).map(\.line) == [70_001])
    }

    @Test("a tag inside a comment does not shift the lines of the tags after it")
    func commentedTag() throws {
        let html = "<!-- <img src=\"old.png\"> -->\n\n<img src=\"new.png\">"
        #expect(urlsAndLines(try references(html, .html)) == ["https://example.org/docs/new.png@3"])
    }
}

/// What the review of issue 34 found: libxml2 makes an element of `<img,>`, which the line scanner does not read as a
/// tag; each such element made the scanner search the rest of the page again.
@Suite("HTML: tags the line scanner cannot see")
struct UnseenTagTests {
    @Test("many <img,> tags: every image found, each scan of the rest made once, not once per tag")
    func unseenTags() throws {
        let page = String(repeating: "<img,>\n", count: 60_000) + "<img src=\"https://example.org/last.png\">\n"
        let found = try images(page, .html).references
        #expect(found.last?.url == "https://example.org/last.png" && found.last?.line == 60_001)
    }
}

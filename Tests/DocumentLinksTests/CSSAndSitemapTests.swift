import DocumentLinks
import Testing

@Suite("Style sheets and sitemaps")
struct CSSAndSitemapTests {
    @Test("url() quoted or not and image-set() strings, comments, @import and @font-face skipped, with lines")
    func styleSheet() throws {
        let css = """
            @import url("other.css");
            /* .old { background: url(old.png) } */
            .a { background: url( "a.png" ) no-repeat; }
            .b { background-image: URL(b.png); }
            .c { background-image: image-set("c.avif" type("image/avif"), 'c.jpg' 1x); }
            @font-face { font-family: X; src: url(x.woff2) format("woff2"); }
            .d { content: "url(not-an-image.png)"; cursor: url(data:image/png;base64,AA), auto; }
            """
        let result = try images(css, .css, base: "https://example.org/css/site.css")
        #expect(urlsAndLines(result.references) == [
            "https://example.org/css/a.png@3", "https://example.org/css/b.png@4", "https://example.org/css/c.avif@5",
            "https://example.org/css/c.jpg@5",
        ])
        #expect(result.references.map(\.context) == ["css url()", "css url()", "css image-set()", "css image-set()"])
        #expect(result.dataURIsSkipped == 1)
    }

    @Test("image:loc in Google's image namespace, whatever its prefix; page locs are not images")
    func sitemap() throws {
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
                    xmlns:img="http://www.google.com/schemas/sitemap-image/1.1">
              <url>
                <loc>https://example.org/page</loc>
                <img:image><img:loc>https://example.org/a.jpg</img:loc></img:image>
                <img:image>
                  <img:loc>
                    https://example.org/b.jpg
                  </img:loc>
                </img:image>
                <other:loc xmlns:other="urn:other">https://example.org/not-an-image.jpg</other:loc>
              </url>
            </urlset>
            """
        let found = try references(xml, .sitemap, base: "https://example.org/sitemap.xml")
        #expect(urlsAndLines(found) == ["https://example.org/a.jpg@6", "https://example.org/b.jpg@8"])
        #expect(Set(found.map(\.context)) == ["sitemap image:loc"])
    }

    @Test("a sitemap that is not well-formed is an error naming the document, Expat's reason and line")
    func malformedSitemap() throws {
        let error = #expect(throws: DocumentLinksError.self) {
            try references("<urlset>\n<url>\n</urlset>", .sitemap, base: "https://example.org/sitemap.xml")
        }
        #expect(error?.code == .unparsable)
        #expect(error?.description == "https://example.org/sitemap.xml: not well-formed XML: mismatched tag at line 3")
    }
}

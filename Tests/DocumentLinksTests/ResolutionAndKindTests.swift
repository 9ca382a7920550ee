import DocumentLinks
import Testing

@Suite("URL resolution and document kinds")
struct ResolutionAndKindTests {
    /// RFC 3986 §5.4's examples (base http://a/b/c/d;p?q), which Python's urllib.parse.urljoin answers the same way,
    /// and a few more that documents hold.
    @Test("RFC 3986 §5.4 reference resolution", arguments: [
        ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"), ("/g", "http://a/g"),
        ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q#s"),
        ("g#s", "http://a/b/c/g#s"), (";x", "http://a/b/c/;x"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"),
        ("..", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../g", "http://a/g"),
        ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"), ("/../g", "http://a/g"),
        ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."), ("..g", "http://a/b/c/..g"),
        ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"), ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"),
        ("g;x=1/./y", "http://a/b/c/g;x=1/y"), ("g;x=1/../y", "http://a/b/c/y"), ("HTTPS://Other/x", "https://Other/x"),
        ("a b.png", "http://a/b/c/a%20b.png"), ("é.png", "http://a/b/c/%C3%A9.png"), ("  spaced.png\n", "http://a/b/c/spaced.png"),
        ("c,w_1/x.png", "http://a/b/c/c,w_1/x.png"), ("%41.png", "http://a/b/c/%41.png"),
        // Where Foundation's URL(string:relativeTo:) differs: it re-encodes a stray % (%25zz), keeps the dots of an
        // absolute reference (urljoin too; RFC 3986 §5.2.2 and curl remove them) and gives nil for a bad port or
        // IPv6 literal, which must still be reported, with its line, as broken.
        ("%zz.png", "http://a/b/c/%zz.png"), ("HTTP://A/B/../c", "http://A/c"), ("//host/a/../b", "http://host/b"),
        ("https://example.org:badport/x.png", "https://example.org:badport/x.png"), ("a#b#c.png", "http://a/b/c/a#b#c.png"),
        ("http:g", "http:g"), ("g:h", "g:h"), ("./a:b.png", "http://a/b/c/a:b.png"),
    ])
    func resolution(_ reference: String, _ expected: String) {
        #expect(ReferenceResolver(base: "http://a/b/c/d;p?q").resolve(reference) == expected)
    }

    @Test("a base with no path")
    func baseWithoutPath() {
        #expect(ReferenceResolver(base: "https://example.org").resolve("a.png") == "https://example.org/a.png")
    }

    @Test("the kind from the extension, else the Content-Type, else a sniff; an explicit kind wins")
    func kinds() {
        let bytes = Array("{\"a\": 1}".utf8)
        #expect(DocumentImageExtractor.kind(of: bytes, name: "docs/README.markdown") == .markdown)
        #expect(DocumentImageExtractor.kind(of: bytes, name: "https://x.example/page.HTM?x=1") == .html)
        #expect(DocumentImageExtractor.kind(of: bytes, name: "https://x.example/api", contentType: "text/css; charset=utf-8") == .css)
        #expect(DocumentImageExtractor.kind(of: bytes, name: "https://x.example/api") == .json)
        #expect(DocumentImageExtractor.kind(of: Array("<?xml version=\"1.0\"?><urlset/>".utf8), name: "feed") == .sitemap)
        #expect(DocumentImageExtractor.kind(of: Array("<!DOCTYPE html><p>".utf8), name: "page") == .html)
        #expect(DocumentImageExtractor.kind(of: Array("# Title".utf8), name: "notes") == .markdown)
        #expect(DocumentImageExtractor.kind(of: bytes, name: "a.json", explicit: .css) == .css)
    }
}

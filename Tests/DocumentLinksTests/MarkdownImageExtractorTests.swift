import DocumentLinks
import Testing

@Suite("Markdown documents")
struct MarkdownImageExtractorTests {
    @Test("inline and reference-style images, with the line of each (cmark 0.30 gives inline nodes their lines)")
    func inlineAndReferenceImages() throws {
        let markdown = """
            # Title

            Some text
            and ![inline](img/a.png "title") here,
            then ![by reference][logo] and [![badge](https://badge.example/b.svg)](https://ci.example).

            - item
              ![in a list](c.png)

            [logo]: https://example.org/logo.png
            """
        let found = try references(markdown, .markdown, base: "https://example.org/repo/README.md")
        #expect(urlsAndLines(found) == [
            "https://example.org/repo/img/a.png@4", "https://example.org/logo.png@5", "https://badge.example/b.svg@5",
            "https://example.org/repo/c.png@8",
        ])
        #expect(Set(found.map(\.context)) == ["markdown image"])
    }

    @Test("raw HTML blocks and inline HTML are read as HTML, on their own lines")
    func rawHTML() throws {
        let markdown = """
            Intro <img src="inline.png"> text.

            <p align="center">
              <img src="block.png" width="100">
              <img srcset="x1.png 1x, x2.png 2x">
            </p>
            """
        let found = try references(markdown, .markdown, base: "https://example.org/README.md")
        #expect(urlsAndLines(found) == [
            "https://example.org/inline.png@1", "https://example.org/block.png@4", "https://example.org/x1.png@5",
            "https://example.org/x2.png@5",
        ])
    }

    @Test("an image in a code block is not an image")
    func codeBlock() throws {
        #expect(try references("```\n![no](no.png)\n```\n\n    ![no](no2.png)\n", .markdown).isEmpty)
    }

    @Test("a local document with no base resolves references to file: URLs beside it")
    func localDocument() throws {
        let location = DocumentLocation(path: "/srv/docs/README.md")
        let found = try DocumentImageExtractor().images(in: Array("![x](<img/a b.png>)".utf8), kind: .markdown, location: location)
        #expect(found.references.map(\.url) == ["file:///srv/docs/img/a%20b.png"])
        #expect(found.references.map(\.written) == ["img/a b.png"])
    }

    @Test("Markdown that is not UTF-8 is an error naming the document and the offset")
    func notUTF8() throws {
        let location = DocumentLocation(path: "latin1.md")
        let error = #expect(throws: DocumentLinksError.self) {
            try DocumentImageExtractor().images(in: Array("ok\n".utf8) + [0xE9, 0x0A], kind: .markdown, location: location)
        }
        #expect(error?.code == .notUTF8)
        #expect(error?.description.hasPrefix("latin1.md: not UTF-8") == true)
        #expect(error?.reason.contains("offset 3, line 2") == true)
    }
}

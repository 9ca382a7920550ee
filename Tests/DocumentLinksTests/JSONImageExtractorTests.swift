import DocumentLinks
import Testing

@Suite("JSON documents")
struct JSONImageExtractorTests {
    static let rover = """
        {"photos": [
          {"id": 1, "img_src": "http://mars.jpl.nasa.gov/a.JPG",
           "camera": {"name": "FHAZ", "docs": "https://example.org/cameras"}},
          {"id": 2,
           "img_src": "http:\\/\\/mars.jpl.nasa.gov\\/b\\u002EJPG"}
        ], "next": "relative.json"}
        """

    @Test("without a path: every string that is an absolute http(s) URL, with its line")
    func everyHTTPString() throws {
        let found = try references(Self.rover, .json)
        #expect(urlsAndLines(found) == ["http://mars.jpl.nasa.gov/a.JPG@2", "https://example.org/cameras@3", "http://mars.jpl.nasa.gov/b.JPG@5"])
        #expect(Set(found.map(\.context)) == ["json string"])
    }

    @Test("with --json-path photos[].img_src: only the values at that path")
    func path() throws {
        let found = try references(Self.rover, .json, jsonPath: "photos[].img_src")
        #expect(urlsAndLines(found) == ["http://mars.jpl.nasa.gov/a.JPG@2", "http://mars.jpl.nasa.gov/b.JPG@5"])
        #expect(Set(found.map(\.context)) == ["json path photos[].img_src"])
    }

    @Test("a path that matches nothing is a warning, not an error")
    func pathMatchingNothing() throws {
        let result = try images(Self.rover, .json, jsonPath: "photos[].url")
        #expect(result.references.isEmpty)
        #expect(result.warnings.count == 1)
        #expect(result.warnings.first?.contains("photos[].url") == true)
    }

    @Test("invalid JSON is an error naming the document, with JSONSerialization's message")
    func invalidJSON() throws {
        let error = #expect(throws: DocumentLinksError.self) { try references("{\n\"a\": [1, 2}", .json) }
        #expect(error?.code == .invalidJSON)
        #expect(error?.description.hasPrefix("https://example.org/docs/page.html: not valid JSON: ") == true)
        #expect(error?.description.hasSuffix("(line 2)") == true, "\(String(describing: error))")
    }

    @Test("paths: keys, [] for array elements; malformed ones are errors naming the path",
          arguments: ["", ".a", "a..b", "a.", "a[0].b"])
    func malformedPaths(_ text: String) throws {
        let error = #expect(throws: DocumentLinksError.self) { try JSONPath(parsing: text) }
        #expect(error?.code == .invalidJSONPath)
        #expect(error?.document == "--json-path '\(text)'")
    }

    @Test("a path at the root array")
    func rootArray() throws {
        #expect(try references("[{\"src\": \"a.png\"}, {\"src\": \"b.png\"}]", .json, jsonPath: "[].src").map(\.url) == [
            "https://example.org/docs/a.png", "https://example.org/docs/b.png",
        ])
    }
}

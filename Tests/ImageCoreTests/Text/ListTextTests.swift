import ImageCore
import Testing
import TestSupport

@Suite("list files (--urls, --trace)", .timeLimit(.minutes(5)))
struct ListTextTests {
    static let a = "http://x/a.jpg", b = "http://x/b.jpg", c = "http://x/c.jpg"

    @Test("lines end at \\n, \\r\\n or a lone \\r", arguments: ["\n", "\r\n", "\r"])
    func lineEndings(ending: String) {
        let text = [Self.a, Self.b, Self.c].joined(separator: ending) + ending
        #expect(ListText.entries(text) == [.init(line: 1, text: Self.a), .init(line: 2, text: Self.b), .init(line: 3, text: Self.c)])
    }

    @Test("mixed endings, blank lines and a last line without an ending keep their line numbers")
    func mixedEndings() {
        let text = "\(Self.a)\r\n\r\n\(Self.b)\r\n\(Self.c)"
        #expect(ListText.entries(text) == [.init(line: 1, text: Self.a), .init(line: 3, text: Self.b), .init(line: 4, text: Self.c)])
    }

    @Test("a UTF-8 byte-order mark at the start is skipped")
    func byteOrderMark() {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("\(Self.a)\r\n\(Self.b)\r\n".utf8)
        #expect(ListText.entries(String(decoding: bytes, as: UTF8.self)).map(\.text) == [Self.a, Self.b])
    }

    @Test("trailing white space and a # comment after an entry are dropped; a # inside a URL is kept")
    func comments() {
        let text = """
            # a list of images
              \(Self.a)   \t
            \(Self.b)  # the second one
            \(Self.c)\t# tab, then a comment
            http://x/page.html#top
                # an indented comment
            """
        #expect(ListText.entries(text).map(\.text) == [Self.a, Self.b, Self.c, "http://x/page.html#top"])
        #expect(ListText.entries(text).map(\.line) == [2, 3, 4, 5])
    }

    @Test("only comments and blank lines: no entries")
    func nothing() {
        #expect(ListText.entries("# one\r\n\r\n   \n# two").isEmpty)
        #expect(ListText.entries("").isEmpty)
    }
}

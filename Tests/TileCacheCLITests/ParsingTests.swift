import CacheLab
import Catalogue
import ImageCore
import Testing
import TestSupport
@testable import TileCacheCLI

@Suite("Option parsing", .timeLimit(.minutes(5)))
struct ParsingTests {
    @Test("sizes accept binary and decimal units", arguments: [
        ("10MiB", 10 * 1024 * 1024), ("512KB", 512_000), ("512kib", 524_288), ("4096", 4096),
        ("1.5 GiB", 1_610_612_736), ("20M", 20 * 1024 * 1024), ("0", 0), ("7B", 7),
    ])
    func sizes(text: String, bytes: Int) throws {
        #expect(try ByteSize(parsing: text).bytes == bytes)
    }

    @Test("bad sizes name the input and the reason", arguments: ["", "MiB", "-5MB", "10 parsecs", "1e3", "12XB"])
    func badSizes(text: String) {
        let error = #expect(throws: InputError.self) { try ByteSize(parsing: text) }
        #expect(error?.message.contains("'\(text)'") == true)
    }

    @Test("list options are parsed once into their items: spaces allowed, repeats dropped, 'none' empty")
    func lists() throws {
        #expect(try ListArgument<CountLimit>(parsing: "10, 25 ,10").items.map(\.count) == [10, 25])
        #expect(try ListArgument<CountLimit>(parsing: "None").items.isEmpty)
        #expect(try ListArgument<ByteLimit>(parsing: "1MiB,512KB").items.map(\.size.bytes) == [1 << 20, 512_000])
        #expect(try ListArgument<CombinedLimit>(parsing: "100:10MiB").items.map(\.typed) == ["100:10MiB"])
        #expect(try ListArgument<CachePolicy>(parsing: "LRU,belady").items == [.lru, .belady])
        #expect(try ListArgument<ByteLimit>(parsing: "1MiB,5MiB").description == "1MiB,5MiB")
    }

    @Test("a bad list item is named with its reason", arguments: [
        ("10,0", "'0' is not a positive whole number"), ("10,,20", "'' is not a positive whole number"), ("five", "'five'"),
    ])
    func badLists(text: String, expected: String) {
        let error = #expect(throws: InputError.self) { try ListArgument<CountLimit>(parsing: text) }
        #expect(error?.message.contains(expected) == true, "\(error?.message ?? "")")
    }

    @Test("bad byte, combined and policy items", arguments: [("0B", "zero bytes"), ("10parsecs", "10parsecs")])
    func badByteItems(text: String, expected: String) {
        let error = #expect(throws: InputError.self) { try ListArgument<ByteLimit>(parsing: text) }
        #expect(error?.message.contains(expected) == true)
        #expect(throws: InputError.self) { try ListArgument<CombinedLimit>(parsing: "100") }
        #expect(throws: InputError.self) { try ListArgument<CachePolicy>(parsing: "lru,mru") }
    }

    @Test("element lists mix numbers, ranges, symbols and names")
    func elementLists() throws {
        let selection = try ElementSelection(parsing: "1-3, 26,Fe,gold,NEON")
        #expect(selection.elements.map(\.number) == [1, 2, 3, 10, 26, 79])
        #expect(try ElementSelection(parsing: "118").elements.map(\.symbol) == ["Og"])
        #expect(try ElementSelection(parsing: "caesium,sulphur,aluminum").elements.map(\.symbol) == ["Al", "S", "Cs"])
    }

    @Test("bad element lists name the bad item", arguments: [
        ("1-200", "1-200"), ("Unobtainium", "Unobtainium"), ("5-2", "5-2"), ("1,,2", "empty item"), ("", "empty"), ("0", "'0'"),
    ])
    func badElementLists(text: String, mentions: String) {
        let error = #expect(throws: InputError.self) { try ElementSelection(parsing: text) }
        #expect(error?.message.contains(mentions) == true, "\(error?.message ?? "")")
    }

    @Test("sizes format for people")
    func formatting() {
        #expect(ByteSize.format(512) == "512 B")
        #expect(ByteSize.format(10 * 1024 * 1024) == "10 MiB")
        #expect(ByteSize.format(1536) == "1.5 KiB")
    }
}

import Foundation
import Testing
import TestSupport
@testable import TileCacheCLI

@Suite("docs/cli.md in step with --help", .timeLimit(.minutes(5)))
struct DocsInStepTests {
    /// docs/cli.md, split into its `## ` sections.
    static func sections() throws -> [(title: String, text: String)] {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/cli.md").standardized
        let text = try String(contentsOf: path, encoding: .utf8)
        return text.components(separatedBy: "\n## ").dropFirst().map { part in
            (String(part.prefix { $0 != "\n" }), part)
        }
    }

    @Test("every option every command shows in --help is documented in its section of docs/cli.md (or a shared one)",
          arguments: ["prefetch", "validate", "inspect", "thumbnail", "stats", "clear", "bench-cache", "serve", "origin", "demo", "config"])
    func documented(command: String) throws {
        let sections = try Self.sections()
        let own = sections.filter { $0.title.contains("`tilecache \(command)") }.map(\.text).joined()
        #expect(!own.isEmpty, "docs/cli.md has no section for tilecache \(command)")
        let shared = sections.filter { $0.title.hasPrefix("Shared options") || $0.title.hasPrefix("Configuration") }.map(\.text).joined()
        for option in try ConfigurationSources.options(of: command, includeHidden: false) where !["help", "version"].contains(option.long) {
            let name = "--" + option.long
            let mentioned = [own, shared].contains { text in
                text.range(of: name + "(?![a-z-])", options: .regularExpression) != nil
            }
            #expect(mentioned, "\(name) of tilecache \(command) is not in docs/cli.md")
        }
    }
}

import ArgumentParser
import Foundation
import Testing
import TestSupport
@testable import TileCacheCLI

@Suite("configuration sources: flag > environment > file > default")
struct ConfigurationTests {
    func file(_ text: String, in directory: String) throws -> String {
        let path = directory + "/tilecache.yaml"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("the order holds option by option, and each value says where it came from")
    func precedence() async throws {
        try await withTemporaryDirectory { directory in
            let path = try file("""
                tiles-base: http://file.example/Tiles
                port: 7000
                serve:
                  port: 7100
                  prefetch: true
                  allowed-widths: 64,128
                prefetch:
                  concurrency: 3
                """, in: directory)
            let sources = try ConfigurationSources(
                arguments: ["serve", "--config", path, "--host", "0.0.0.0"],
                environment: ["TILECACHE_PORT": "9000", "TILECACHE_IMAGES_BASE": "http://env.example", "HOME": "/root"])
            func entry(_ name: String) -> ConfigurationSources.Entry? { sources.entries.first { $0.option == name } }
            #expect(entry("host")?.source == .flag && entry("host")?.value == "0.0.0.0")
            #expect(entry("port")?.source == .environment && entry("port")?.value == "9000" && entry("port")?.origin == "TILECACHE_PORT")
            #expect(entry("images-base")?.source == .environment)
            #expect(entry("tiles-base")?.source == .file && entry("tiles-base")?.value == "http://file.example/Tiles")
            #expect(entry("prefetch")?.source == .file && entry("prefetch")?.value == "true")
            #expect(entry("allowed-widths")?.value == "64,128")
            #expect(entry("concurrency")?.source == .default && entry("concurrency")?.value == "8")  // prefetch's section only
            #expect(entry("max-age")?.source == .default && entry("max-age")?.value == "86400")
            // What the parser gets: the borrowed values as if typed, before the typed ones.
            let command = try TileCacheCommand.parseAsRoot(sources.arguments)
            let serve = try #require(command as? TileCacheCommand.Serve)
            #expect(serve.port == 9000 && serve.host == "0.0.0.0" && serve.prefetch)
            #expect(serve.hosts.tilesBase == "http://file.example/Tiles" && serve.hosts.imagesBase == "http://env.example")
            // The file's top-level port (7000) loses to serve's section (7100), which loses to the environment.
            let withoutEnvironment = try ConfigurationSources(arguments: ["serve", "--config", path], environment: [:])
            #expect(withoutEnvironment.entries.first { $0.option == "port" }?.value == "7100")
        }
    }

    @Test("TILECACHE_CONFIG names the file; a typed flag beats everything; flags from the environment take yes/no words")
    func environmentFlags() async throws {
        try await withTemporaryDirectory { directory in
            let path = try file("prefetch:\n  concurrency: 3\n", in: directory)
            let sources = try ConfigurationSources(arguments: ["prefetch", "-j", "5"],
                                                   environment: [ConfigurationSources.fileVariable: path, "TILECACHE_NO_DISK_CACHE": "yes"])
            #expect(sources.entries.first { $0.option == "concurrency" }?.source == .flag)
            #expect(sources.entries.first { $0.option == "concurrency" }?.value == "5")
            #expect(sources.entries.first { $0.option == "no-disk-cache" }?.value == "true")
            #expect(sources.arguments.contains("--no-disk-cache"))
            #expect(throws: InputError.self) {
                try ConfigurationSources(arguments: ["prefetch"], environment: ["TILECACHE_NO_DISK_CACHE": "maybe"])
            }
        }
    }

    @Test("bad input names its source: unknown keys, lists for single values, unreadable files, bad YAML, empty variables")
    func errors() async throws {
        try await withTemporaryDirectory { directory in
            func message(_ yaml: String) -> String {
                do {
                    _ = try ConfigurationSources(arguments: ["serve", "--config", try file(yaml, in: directory)], environment: [:])
                    return "no error"
                } catch { return "\(error)" }
            }
            #expect(message("prot: 8080\n").contains("'prot' is not an option"))
            #expect(message("serve:\n  colour: red\n").contains("'serve.colour' is not an option"))
            #expect(message("port: [1, 2]\n").contains("--port takes one value"))
            #expect(message("port: 8080\n  bad indent: [\n").contains("not valid YAML"))
            #expect(message("- a\n- b\n").contains("expected a mapping"))
            #expect(throws: InputError.self) {
                try ConfigurationSources(arguments: ["serve", "--config", directory + "/missing.yaml"], environment: [:])
            }
            #expect(throws: InputError.self) { try ConfigurationSources(arguments: ["serve"], environment: ["TILECACHE_PORT": " "]) }
        }
        // A near miss of an option's variable is a warning; unrelated TILECACHE_ variables are not.
        let sources = try ConfigurationSources(arguments: ["serve"], environment: ["TILECACHE_PROT": "1", "TILECACHE_SOMETHING_ELSE_ENTIRELY": "x"])
        #expect(sources.warnings.count == 1 && sources.warnings[0].contains("did you mean TILECACHE_PORT"))
        // Other commands are left alone.
        #expect(try ConfigurationSources(arguments: ["origin"], environment: ["TILECACHE_PORT": "1"]).arguments == ["origin"])
    }

    @Test("config --show: a table and JSON of every option with its source; secrets masked; a bad value is reported with its source")
    func show() async throws {
        let run = await tilecache("config", "--show", "serve", "--signing-key", "00112233445566778899aabbccddeeff", "--db",
                                  "postgres://app:hunter2@db:5432/tiles")
        #expect(run.code == 0, "\(run.err)")
        #expect(run.out.contains("--signing-key") && !run.out.contains("00112233445566778899") && run.out.contains("***"))
        #expect(run.out.contains("postgres://app:***@db:5432/tiles") && !run.out.contains("hunter2"))
        let json = await tilecache("config", "--show", "--format", "json", "prefetch")
        let entries = try #require(try json.json() as? [[String: Any]])
        #expect(entries.contains { $0["option"] as? String == "concurrency" && $0["source"] as? String == "default" })
        let bad = await tilecache("config", "--show", "serve", "--port", "eighty")
        #expect(bad.code == 1 && bad.err.contains("--port"))
        #expect(await tilecache("config", "--show", "origin").code == 1)
    }

    @Test("a real process: options from the environment and the file reach the command; a bad one names its variable")
    func process() async throws {
        try await withTemporaryDirectory { directory in
            let path = try file("prefetch:\n  elements: 1-2\n  concurrency: 0\n", in: directory)
            let run = try await ChildProcess.run(["prefetch"], environment: ["TILECACHE_CONFIG": path, "TILECACHE_CACHE_DIR": directory + "/cache"],
                                                 directory: directory)
            #expect(run.code == 1)
            #expect(run.err.contains("concurrency") && run.err.contains("\(path): concurrency"), "\(run.err)")
            let empty = try await ChildProcess.run([], directory: directory)
            #expect(empty.code == 1 && empty.err.contains("USAGE: tilecache"))
        }
    }
}

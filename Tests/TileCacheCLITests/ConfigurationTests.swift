import ArgumentParser
import Foundation
import Catalogue
import ImageCore
import TileCacheService
import Testing
import TestSupport
@testable import TileCacheCLI

@Suite("configuration sources: flag > environment > file > default", .timeLimit(.minutes(5)), .heavy)
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

    @Test("imgproxy's and thumbor's variables configure serve as their own options do; TILECACHE_ and flags win; units converted")
    func peerVariables() throws {
        let environment = ["IMGPROXY_KEY": "736563726574", "IMGPROXY_SALT": "68656C6C6F", "IMGPROXY_ALLOWED_SOURCES": "https://a.example/,https://b.example/",
                           "IMGPROXY_MAX_SRC_RESOLUTION": "16.8", "IMGPROXY_MAX_SRC_FILE_SIZE": "5242880", "IMGPROXY_SIGNATURE_SIZE": "8",
                           "IMGPROXY_AUTO_WEBP": "true", "IMGPROXY_TTL": "3600", "SECURITY_KEY": "thumbor-secret", "ALLOW_UNSAFE_URL": "True",
                           "TILECACHE_MAX_AGE": "60"]
        let sources = try ConfigurationSources(arguments: ["serve", "--signature-size", "16"], environment: environment)
        func entry(_ name: String) -> ConfigurationSources.Entry? { sources.entries.first { $0.option == name } }
        #expect(entry("allowed-sources")?.origin == "IMGPROXY_ALLOWED_SOURCES" && entry("max-pixels")?.value == "16800000")
        #expect(entry("signing-key")?.value == "***" && entry("thumbor-key")?.value == "***" && entry("allow-unsafe-url")?.value == "true")
        #expect(entry("max-age")?.origin == "TILECACHE_MAX_AGE" && entry("signature-size")?.source == .flag)
        let serve = try #require(try TileCacheCommand.parseAsRoot(sources.arguments) as? TileCacheCommand.Serve)
        let configuration = try serve.serviceConfiguration()
        #expect(configuration.allowedSources.patterns == ["https://a.example/", "https://b.example/"])
        let full = try URLSigner(keyHex: "736563726574", saltHex: "68656C6C6F").pathSignature("/x")  // 43 characters: 32 bytes
        let kept = try #require(configuration.signer?.pathSignature("/x"))  // --signature-size 16 beats IMGPROXY_SIGNATURE_SIZE
        #expect(kept.count == 22 && kept.hasPrefix(full.prefix(21)))
        #expect(configuration.autoWebP && configuration.allowsUnsafeThumborURLs && configuration.thumborKey == Array("thumbor-secret".utf8))
        #expect(configuration.maxAgeSeconds == 60 && configuration.pipeline.downloader.transferOptions.maxBodyBytes == 5_242_880)
        #expect(serve.pipeline.maxPixels == 16_800_000)
        #expect(throws: InputError.self) { try ConfigurationSources(arguments: ["serve"], environment: ["IMGPROXY_MAX_SRC_RESOLUTION": "lots"]) }
        // Other commands do not read them.
        #expect(try ConfigurationSources(arguments: ["prefetch"], environment: ["IMGPROXY_MAX_SRC_FILE_SIZE": "1"]).arguments == ["prefetch"])
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
        let entries = try json.decoded(as: [ConfigShowEntry].self)
        #expect(entries.contains { $0.option == "concurrency" && $0.source == "default" })
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

    /// One row of `config --show --format json`, decoded as a script reading it would.
    struct ShownOption: Decodable {
        var option: String
        var value: String?
        var source: String
        var origin: String?
    }

    func shown(_ arguments: String...) async throws -> [String: ShownOption] {
        let run = await tilecache(["config", "--format", "json", "--show"] + arguments)
        #expect(run.code == 0, "\(run.err)")
        let rows = try JSONDecoder().decode([ShownOption].self, from: Data(run.out.utf8))
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.option, $0) })
    }

    @Test("config --show gives every option the value the command runs with, from the command's own configuration code")
    func showTellsTheTruth() async throws {
        let serve = try await shown("serve")
        let parsed = try #require(try TileCacheCommand.parseAsRoot(["serve"]) as? TileCacheCommand.Serve)
        let configuration = try parsed.serviceConfiguration()
        #expect(serve["fast-path"]?.value == "true" && configuration.fastPath)
        #expect(serve["tiles-base"]?.value == configuration.builder.tilesBase && serve["images-base"]?.value == configuration.builder.imagesBase)
        #expect(serve["cache-dir"]?.value == configuration.pipeline.diskDirectory)
        #expect(serve["memory-count"]?.value == "\(configuration.pipeline.memoryCountLimit)" && serve["memory-count"]?.value == "100000")
        #expect(serve["memory-bytes"]?.value == "64 MiB" && serve["disk-bytes"]?.value == "256 MiB")
        #expect(serve["memory-content"]?.value == "encoded" && serve["memory-policy"]?.value == "lru")
        #expect(serve["resize-concurrency"]?.value == "\(ProcessInfo.processInfo.activeProcessorCount)")
        #expect(serve["db"]?.value == configuration.database.description)
        for command in ["serve", "prefetch", "validate"] {
            let rows = try await shown(command)
            let unset = rows.values.filter { $0.value == nil || $0.value == "-" }.map(\.option)
            #expect(unset.isEmpty, "\(command): shown without a value: \(unset.sorted())")
        }
        let prefetch = try await shown("prefetch", "--elements", "1-3")
        #expect(prefetch["memory-count"]?.value == "100" && prefetch["memory-bytes"]?.value == "10 MiB" && prefetch["kind"]?.value == "all")
        let validate = try await shown("validate")
        #expect(validate["cache-dir"]?.value?.hasPrefix("none") == true, "validate stores nothing without --store")
        #expect(try await shown("validate", "--store")["cache-dir"]?.value == "cache")
        #expect(try await shown("serve", "--no-fast-path")["fast-path"]?.value == "false")
    }

    @Test("config --show says --db comes from TILECACHE_DATABASE_URL when that is where serve reads it (a real process)")
    func showDatabaseVariable() async throws {
        try await withTemporaryDirectory { directory in
            let run = try await ChildProcess.run(["config", "--format", "json", "--show", "serve"],
                                                 environment: ["TILECACHE_DATABASE_URL": "postgres://app:hunter2@db.example:5432/tiles"],
                                                 directory: directory)
            #expect(run.code == 0, "\(run.err)")
            let rows = try JSONDecoder().decode([ShownOption].self, from: Data(run.out.utf8))
            let db = try #require(rows.first { $0.option == "db" })
            #expect(db.source == "environment" && db.origin == "TILECACHE_DATABASE_URL")
            #expect(db.value == "postgres://app:***@db.example:5432/tiles" && !run.out.contains("hunter2"))
        }
    }

    @Test("every example in config --help runs as written (a config file of its name in place)")
    func helpExamplesRun() async throws {
        // The discussion as written (the help text wraps long examples).
        let discussion = TileCacheCommand.Config.configuration.discussion
        let examples = discussion.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("tilecache config") || $0.contains("=") && $0.contains(" tilecache config") }
        #expect(examples.count >= 2, "\(discussion)")
        try await withTemporaryDirectory { directory in
            let path = try file("serve:\n  port: 7100\n", in: directory)
            for example in examples {
                var words = example.split(separator: " ").map(String.init)
                // Environment assignments before the command (TILECACHE_PORT=9000) are not arguments.
                words = Array(words.drop { $0.contains("=") }.dropFirst())  // and "tilecache"
                words = words.map { $0 == "tilecache.yaml" || $0.hasSuffix(".yaml") ? path : $0 }
                let run = await tilecache(words)
                #expect(run.code == 0, "\(example): \(run.err)")
            }
        }
    }

    @Test("a config file: an option of another command in a section is an error naming both; typos get a suggestion; lists work for list options")
    func fileSections() async throws {
        try await withTemporaryDirectory { directory in
            func message(_ yaml: String, command: String = "prefetch") -> String {
                do {
                    _ = try ConfigurationSources(arguments: [command, "--config", try file(yaml, in: directory)], environment: [:])
                    return "no error"
                } catch { return "\(error)" }
            }
            #expect(message("prefetch:\n  port: 9000\n").contains("'prefetch.port' is not an option of prefetch (it is an option of serve: put it under serve: or at the top level)"))
            #expect(message("prefetch:\n  port: 9000\n", command: "serve").contains("'prefetch.port' is not an option of prefetch"),
                    "a wrong section is an error whichever command reads the file")
            #expect(message("tiles-bse: http://x\n").contains("'tiles-bse' is not an option of serve, prefetch, validate; did you mean 'tiles-base'?"))
            #expect(message("serve:\n  prot: 1\n", command: "serve").contains("'serve.prot' is not an option of serve; did you mean 'port'?"))
            let path = try file("serve:\n  allowed-widths: [64, 128]\nelements: [1-3, Fe]\n", in: directory)
            let serve = try ConfigurationSources(arguments: ["serve", "--config", path], environment: [:])
            let parsed = try #require(try TileCacheCommand.parseAsRoot(serve.arguments) as? TileCacheCommand.Serve)
            #expect(try parsed.widths() == [64, 128])
            let prefetch = try ConfigurationSources(arguments: ["prefetch", "--config", path], environment: [:])
            let parsedPrefetch = try #require(try TileCacheCommand.parseAsRoot(prefetch.arguments) as? TileCacheCommand.Prefetch)
            #expect(parsedPrefetch.source.elements?.elements.map(\.number) == [1, 2, 3, 26])
        }
    }
}

/// A client's model of one option of `config --show --format json` (docs/cli.md, "tilecache config --show"): the
/// option, the value it would run with, and its source.
private struct ConfigShowEntry: Decodable {
    var option: String
    /// Nil when the option is unset and has no default.
    var value: String?
    /// `flag`, `environment`, `file` or `default`.
    var source: String
}

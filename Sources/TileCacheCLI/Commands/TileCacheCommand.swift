public import ArgumentParser
import Foundation
import ImageCore

/// `tilecache`: prefetch, validate and inspect images, and run the built-in origin.
///
/// Exit codes: 0 all good, 2 some URLs or files are broken, 1 usage or runtime error.
public struct TileCacheCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "tilecache",
        abstract: "Prefetch, validate and cache element images (and any other image URLs).",
        discussion: """
            Reports go to stdout; progress and logs go to stderr.
            Exit codes: 0 all good, 2 some URLs or files are broken, 1 usage or runtime error.
            """,
        version: TileCacheVersion.string,
        subcommands: [Prefetch.self, Validate.self, Inspect.self, Stats.self, Clear.self, BenchCache.self, Thumbnail.self, Serve.self, Origin.self, Demo.self, Config.self])

    public init() {}

    /// Parses `arguments` and runs the command, writing to `Console.current`; returns the process exit code.
    public static func run(arguments: [String]) async -> Int32 {
        let console = Console.current
        guard !arguments.isEmpty else {
            // No command is a usage error: the help goes to stderr, and the exit code says it was not a success.
            console.err(helpMessage() + "\n")
            return 1
        }
        var sources: ConfigurationSources?
        do {
            try refuseHeightAsH(arguments)
            // Options of serve, prefetch and validate from the environment and a config file, as if typed.
            let resolved = try ConfigurationSources(arguments: arguments, environment: ProcessInfo.processInfo.environment)
            sources = resolved
            for warning in resolved.warnings { console.err(warning + "\n") }
            var command = try parseAsRoot(resolved.arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return 0
        } catch let exit as ExitCode {
            return exit.rawValue
        } catch {
            let message = fullMessage(for: error)
            if exitCode(for: error) == .success {
                console.out(message + "\n")  // --help, --version
                return 0
            }
            console.err(message + "\n")
            if exitCode(for: error) == .validationFailure, let note = sources?.note { console.err(note + "\n") }
            return 1
        }
    }
}

/// `thumbnail ... -h 64`: `-h` is help in every command (the parser answers it with the help and exit 0 before the
/// command runs), and `thumbnail` once took it for the height. A number after it means the height was meant: an
/// error, rather than help and a success for thumbnails never made.
func refuseHeightAsH(_ arguments: [String]) throws(InputError) {
    guard arguments.first == "thumbnail" else { return }
    let words = arguments.prefix { $0 != "--" }
    for (index, word) in words.enumerated() where word == "-h" && index + 1 < words.count && Int(words[index + 1]) != nil {
        throw InputError("thumbnail: -h is help, as in every command; give the height as --height \(words[index + 1])")
    }
}

/// Thrown by a command that ran to the end but found broken URLs or files: exit code 2.
let brokenFound = ExitCode(2)

public import ArgumentParser
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
        subcommands: [Prefetch.self, Validate.self, Inspect.self, Stats.self, Clear.self, BenchCache.self, Thumbnail.self, Serve.self, Origin.self, Demo.self])

    public init() {}

    /// Parses `arguments` and runs the command, writing to `Console.current`; returns the process exit code.
    public static func run(arguments: [String]) async -> Int32 {
        let console = Console.current
        do {
            var command = try parseAsRoot(arguments)
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
            return 1
        }
    }
}

/// Thrown by a command that ran to the end but found broken URLs or files: exit code 2.
let brokenFound = ExitCode(2)

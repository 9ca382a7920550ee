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
            var command = try parseAsRoot(attachingNegativeNumbers(resolved.arguments))
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

/// `-j -3`, `--concurrency -3`, `--disk-bytes -2MiB`: the parser takes every word that starts with `-` for an option,
/// so the option before a negative number was "missing a value" and the number was named nowhere. A word that is a
/// negative number (`-` then a digit, or `-.` then a digit) right after an option's name is attached to it (`-j=-3`,
/// `--concurrency=-3`), for every option of every command, given on the command line or from the environment: the
/// option's own check then refuses it with its range ("--concurrency must be 1...256, got -3"), an option that takes
/// any number takes it, and a flag is refused by the parser, which names the flag and the value. After `--`, nothing
/// is changed.
func attachingNegativeNumbers(_ arguments: [String]) -> [String] {
    func isOptionName(_ word: String) -> Bool {
        let letters = word.drop { $0 == "-" }
        let dashes = word.count - letters.count
        guard let first = letters.first, first.isLetter, !word.contains("=") else { return false }
        return (dashes == 1 && letters.count == 1) || (dashes == 2 && letters.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" })
    }
    func isNegativeNumber(_ word: String) -> Bool {
        let rest = word.dropFirst()
        guard word.first == "-", let first = rest.first else { return false }
        return first.isASCII && first.isNumber || (first == "." && rest.dropFirst().first.map { $0.isASCII && $0.isNumber } == true)
    }
    var result: [String] = []
    var index = arguments.startIndex
    while index < arguments.endIndex {
        let word = arguments[index]
        if word == "--" { return result + arguments[index...] }
        if isOptionName(word), index + 1 < arguments.endIndex, isNegativeNumber(arguments[index + 1]) {
            result.append(word + "=" + arguments[index + 1])
            index += 2
        } else {
            result.append(word)
            index += 1
        }
    }
    return result
}

/// Thrown by a command that ran to the end but found broken URLs or files: exit code 2.
let brokenFound = ExitCode(2)

import ArgumentParser
import Foundation
import NIOConcurrencyHelpers
import TileCacheService
import Yams

/// Options of `serve`, `prefetch` and `validate` from the environment (`TILECACHE_<OPTION>`) and a YAML config file
/// (`--config FILE` or `TILECACHE_CONFIG`), with the order flag > environment > file > default.
///
/// The argument parser stays the one place options are defined, typed and checked: the command's own option list comes
/// from its `--experimental-dump-help` description, and a value from the environment or the file becomes the same
/// `--option value` a user could have typed, inserted after the command name. A bad value is then reported by the parser
/// exactly as if it had been typed, and the error names where it came from.
///
/// The file holds option names without their dashes, at the top level (for every command that has the option) or under
/// a command's name (for that command, first):
///
/// ```yaml
/// tiles-base: http://127.0.0.1:8081/periodictable/Tiles
/// images-base: http://127.0.0.1:8081
/// serve:
///   port: 8090
///   prefetch: true
/// ```
struct ConfigurationSources {
    /// The commands whose options may come from the environment and a file.
    static let commands = ["serve", "prefetch", "validate"]
    /// The variable naming a config file when `--config` is not given.
    static let fileVariable = "TILECACHE_CONFIG"
    /// Options that take a comma-separated list in one value: a YAML list gives them its items joined by commas.
    static let commaLists: Set<String> = ["allowed-widths", "elements", "cors-origin"]
    /// Options whose environment variable the command reads itself, under another name than `TILECACHE_<OPTION>`.
    static let commandVariables = ["db": FavoritesDatabase.variable]
    /// Variables of the project that are not `TILECACHE_<OPTION>` of these commands (no warning for them).
    static let otherVariables: Set<String> = [fileVariable, "TILECACHE_DATABASE_URL", "TILECACHE_TEST_TIME_SCALE"]

    /// Where an option's value came from.
    enum Source: String, Encodable {
        case flag, environment, file, `default`
    }

    /// One option of a command, resolved.
    struct Entry: Encodable {
        var option: String
        /// The value (secrets masked); nil when the option is unset and has no default.
        var value: String?
        var source: Source
        /// The variable or file key it came from, when not a flag or default.
        var origin: String?
    }

    /// An option as the command describes it.
    struct Option {
        var long: String
        var names: Set<String>
        var isFlag: Bool
        var isRepeating: Bool
        var defaultValue: String?
        /// `--no-<long>` exists.
        var hasInversion = false
        /// Not shown in `--help` (another name kept for an old option).
        var isHidden = false

        var variable: String { "TILECACHE_" + long.uppercased().replacingOccurrences(of: "-", with: "_") }
        var isSecret: Bool { ["signing-key", "signing-salt", "write-token", "db", "thumbor-key"].contains(long) }
    }

    /// The arguments to parse, with values from the environment and the file inserted.
    var arguments: [String]
    /// Every option of the command with its value and source (empty for other commands).
    var entries: [Entry] = []
    /// Warnings for the user (unknown `TILECACHE_` variables).
    var warnings: [String] = []

    /// A line naming the options that came from the environment or the file, for an error about the command line
    /// (which shows them as if typed); nil when every option was typed.
    var note: String? {
        let borrowed = entries.filter { $0.source == .environment || $0.source == .file }
        guard !borrowed.isEmpty else { return nil }
        return "note: options not typed: " + borrowed.map { "--\($0.option) from \($0.origin ?? $0.source.rawValue)" }.joined(separator: "; ")
    }

    /// Resolves `arguments` (a command line without the executable).
    ///
    /// - Throws: `InputError` naming the variable, file or key and the reason.
    /// - Parameter report: fill `entries` even when nothing comes from the environment or a file (`config --show`).
    init(arguments: [String], environment: [String: String], report: Bool = false) throws {
        self.arguments = arguments
        guard let command = arguments.first, Self.commands.contains(command) else { return }
        let given = Array(arguments.dropFirst())
        if given.contains(where: { ["-h", "--help", "--experimental-dump-help", "--version"].contains($0) }) { return }
        let file = try Self.configFile(given: given, environment: environment)
        // Nothing to borrow and nothing to show: the command line is parsed as typed, without describing the command.
        let peers = command == "serve" ? Self.peerVariables : [:]
        guard report || file != nil || environment.keys.contains(where: { $0.hasPrefix("TILECACHE_") })
                || peers.values.contains(where: { environment[$0.variable] != nil }) else { return }
        let options = try Self.options(of: command)
        let values = try file.map { try Self.load($0, command: command, known: Self.allOptionNames()) } ?? [:]

        var inserted: [String] = []
        for option in options where !["config", "help", "version"].contains(option.long) {
            if Self.isGiven(option, in: given) {
                entries.append(Entry(option: option.long, value: Self.givenValue(option, in: given), source: .flag))
                continue
            }
            // An option whose variable the command reads itself (TILECACHE_DATABASE_URL for --db): shown, not inserted.
            if let variable = Self.commandVariables[option.long], let text = environment[variable], !text.isEmpty {
                entries.append(Entry(option: option.long, value: text, source: .environment, origin: variable))
                continue
            }
            if let text = environment[option.variable] {
                if !option.isFlag, text.trimmingCharacters(in: .whitespaces).isEmpty {
                    throw InputError("environment variable \(option.variable) is set but empty: give a value for --\(option.long), or unset it")
                }
                let words = try Self.words(for: option, value: .text(text), from: "environment variable \(option.variable)")
                inserted += words
                entries.append(Entry(option: option.long, value: option.isFlag ? String(words.first == "--" + option.long) : text,
                                     source: .environment, origin: option.variable))
                continue
            }
            if let (variable, convert) = peers[option.long], let raw = environment[variable], !raw.isEmpty {
                let text = try convert(raw)
                inserted += try Self.words(for: option, value: .text(text), from: "environment variable \(variable)")
                entries.append(Entry(option: option.long, value: option.isFlag ? String(["1", "true", "yes", "on"].contains(text.lowercased())) : text,
                                     source: .environment, origin: variable))
                continue
            }
            if let value = values[option.long], let path = file {
                let words = try Self.words(for: option, value: value, from: "\(path): key '\(option.long)'")
                inserted += words
                entries.append(Entry(option: option.long, value: value.display, source: .file, origin: "\(path): \(option.long)"))
                continue
            }
            // A flag with an inversion declares its default as the spelling that is on (`--fast-path`).
            let flagDefault = option.defaultValue == "--" + option.long ? "true" : "false"
            entries.append(Entry(option: option.long, value: option.isFlag ? flagDefault : option.defaultValue, source: .default))
        }
        for index in entries.indices where options.first(where: { $0.long == entries[index].option })?.isSecret == true {
            if let value = entries[index].value { entries[index].value = Self.mask(option: entries[index].option, value) }
        }
        // A variable one or two letters away from an option's is most likely a typo of it.
        let own = Set(options.map(\.variable)).union(Self.otherVariables)
        let others = environment.keys.filter { $0.hasPrefix("TILECACHE_") && !own.contains($0) }
        let known = others.isEmpty ? own : own.union(Self.commands.flatMap { (try? Self.options(of: $0)) ?? [] }.map(\.variable))
        for name in others.sorted() where !known.contains(name) {
            if let near = known.sorted().first(where: { Self.distance(name, $0) <= 2 }) {
                warnings.append("warning: environment variable \(name) is not an option's; did you mean \(near)? (ignored)")
            }
        }
        self.arguments = [command] + inserted + given
    }

    /// The edit distance of two names (insertions, deletions and substitutions).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        var row = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }

    /// A secret's value as shown: a database URL with its password masked, anything else as `***`.
    static func mask(option: String, _ value: String) -> String {
        option == "db" ? PostgresLocation.mask(value) : "***"
    }

    // MARK: - The command's options

    private struct Dump: Decodable {
        struct Command: Decodable { var arguments: [Argument]? }
        struct Argument: Decodable {
            struct Name: Decodable { var kind: String; var name: String }
            var kind: String
            var names: [Name]?
            var isRepeating: Bool?
            var defaultValue: String?
            var shouldDisplay: Bool?
        }
        var command: Command
    }

    /// The options of `command`, read from the parser's own description of it (hidden ones too, unless
    /// `includeHidden` is false). Each command's description is made once per process: making it walks the whole
    /// command (about 35 ms in a release build, 130 ms in a debug one).
    static func options(of command: String, includeHidden: Bool = true) throws -> [Option] {
        let all: [Option]
        if let known = described.withLockedValue({ $0[command] }) {
            all = known
        } else {
            all = try describe(command)  // outside the lock: two threads may both describe it once, harmlessly
            described.withLockedValue { $0[command] = all }
        }
        return includeHidden ? all : all.filter { !$0.isHidden }
    }

    private static let described = NIOLockedValueBox<[String: [Option]]>([:])

    private static func describe(_ command: String) throws -> [Option] {
        let message: String
        do {
            _ = try TileCacheCommand.parseAsRoot([command, "--experimental-dump-help"])
            return []
        } catch {
            message = TileCacheCommand.fullMessage(for: error)
        }
        let dump = try JSONDecoder().decode(Dump.self, from: Data(message.utf8))
        let arguments = dump.command.arguments ?? []
        let longNames = Set(arguments.flatMap { $0.names ?? [] }.filter { $0.kind == "long" }.map(\.name))
        return arguments.compactMap { argument in
            guard argument.kind != "positional", let names = argument.names,
                  let long = names.first(where: { $0.kind == "long" })?.name else { return nil }
            if long.hasPrefix("no-"), longNames.contains(String(long.dropFirst(3))) { return nil }  // an inversion
            return Option(long: long, names: Set(names.map { ($0.kind == "short" ? "-" : "--") + $0.name }),
                          isFlag: argument.kind == "flag", isRepeating: argument.isRepeating ?? false,
                          defaultValue: argument.defaultValue, hasInversion: longNames.contains("no-" + long),
                          isHidden: argument.shouldDisplay == false)
        }
    }

    /// Every long option name of the three commands (a file key must be one of them).
    static func allOptionNames() throws -> Set<String> {
        Set(try commands.flatMap { try options(of: $0) }.map(\.long))
    }

    // MARK: - Arguments given

    /// Whether the command line sets `option` (or its inversion) itself.
    static func isGiven(_ option: Option, in given: [String]) -> Bool {
        for word in given.prefix(while: { $0 != "--" }) {
            let name = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
            if option.names.contains(name) || name == "--no-" + option.long { return true }
            // Short options glued to their value (`-j8`).
            if let short = option.names.first(where: { $0.count == 2 }), word.hasPrefix(short), word.count > 2, !word.hasPrefix("--") { return true }
        }
        return false
    }

    /// The value the command line gives `option`, as typed (secrets are masked afterwards).
    static func givenValue(_ option: Option, in given: [String]) -> String? {
        var values: [String] = []
        var index = given.startIndex
        while index < given.endIndex, given[index] != "--" {
            let word = given[index]
            let parts = word.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            if option.isFlag {
                if option.names.contains(word) { values = ["true"] } else if word == "--no-" + option.long { values = ["false"] }
            } else if option.names.contains(parts[0]) {
                if parts.count == 2 { values.append(parts[1]) } else if index + 1 < given.endIndex { values.append(given[index + 1]); index += 1 }
            }
            index += 1
        }
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    // MARK: - Values from the environment and the file

    /// A value from the environment (text) or the file (text, bool or list).
    enum Value {
        case text(String)
        case bool(Bool)
        case list([String])

        var display: String {
            switch self {
            case .text(let text): text
            case .bool(let flag): String(flag)
            case .list(let items): items.joined(separator: ", ")
            }
        }
    }

    /// The words that set `option` to `value`: `--name value` (repeated for a list), `--name` or `--no-name` for a flag.
    static func words(for option: Option, value: Value, from origin: String) throws -> [String] {
        if option.isFlag {
            let flag: Bool
            switch value {
            case .bool(let given): flag = given
            case .text(let text):
                switch text.lowercased() {
                case "1", "true", "yes", "on": flag = true
                case "0", "false", "no", "off", "": flag = false
                default: throw InputError("\(origin): '\(text)' is not a yes/no value for --\(option.long) (use true or false)")
                }
            case .list: throw InputError("\(origin): --\(option.long) is a yes/no flag, not a list")
            }
            if flag { return ["--" + option.long] }
            return option.hasInversion ? ["--no-" + option.long] : []
        }
        switch value {
        case .text(let text): return ["--" + option.long, text]
        case .bool(let flag): return ["--" + option.long, String(flag)]
        case .list(let items):
            if commaLists.contains(option.long) { return ["--" + option.long, items.joined(separator: ",")] }
            guard option.isRepeating else {
                throw InputError("\(origin): --\(option.long) takes one value, not a list of \(items.count)")
            }
            return items.flatMap { ["--" + option.long, $0] }
        }
    }

    /// The config file: `--config FILE` on the command line, else `TILECACHE_CONFIG`.
    static func configFile(given: [String], environment: [String: String]) throws -> String? {
        for (index, word) in given.enumerated() {
            if word == "--" { break }
            if word.hasPrefix("--config=") { return String(word.dropFirst("--config=".count)) }
            if word == "--config" {
                guard index + 1 < given.count else { throw InputError("--config needs a file") }
                return given[index + 1]
            }
        }
        if let path = environment[fileVariable], !path.isEmpty { return path }
        return nil
    }

    /// The values the file gives `command`: its section first, then the top level.
    ///
    /// - Throws: `InputError` when the file cannot be read, is not YAML, or has a key that is no option.
    static func load(_ path: String, command: String, known: Set<String>) throws -> [String: Value] {
        let text = try InputFile.read(path, what: "the config file").text
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch {
            throw InputError("config file \(path): not valid YAML: \(error)")
        }
        guard let root else { return [:] }
        guard let mapping = root.mapping else { throw InputError("config file \(path): expected a mapping of option names to values") }
        var top: [String: Value] = [:], section: [String: Value] = [:]
        for (keyNode, valueNode) in mapping {
            guard let key = keyNode.string else { throw InputError("config file \(path): a key is not text (line \(keyNode.mark?.line ?? 0))") }
            if commands.contains(key) {
                guard let inner = valueNode.mapping else { throw InputError("config file \(path): '\(key)' must hold a mapping of options") }
                let own = Set(try options(of: key).map(\.long))
                for (innerKey, innerValue) in inner {
                    guard let name = innerKey.string else {
                        throw InputError("config file \(path): a key under '\(key)' is not text (line \((innerKey.mark?.line ?? 0)))")
                    }
                    let value = try value(of: innerValue, key: "\(key).\(name)", path: path)
                    guard own.contains(name) else {
                        // An option of another command is a mistake in this section, never ignored.
                        let owners = try commands.filter { try options(of: $0).contains { $0.long == name } }
                        let hint = owners.isEmpty ? suggestion(for: name, among: own) ?? ""
                            : " (it is an option of \(owners.joined(separator: " and ")): put it under \(owners[0]): or at the top level)"
                        throw InputError("config file \(path): '\(key).\(name)' is not an option of \(key)\(hint)")
                    }
                    if key == command { section[name] = value }
                }
                continue
            }
            guard known.contains(key) else {
                let hint = suggestion(for: key, among: known.union(commands)) ?? " (write option names without dashes, e.g. tiles-base)"
                throw InputError("config file \(path): '\(key)' is not an option of \(commands.joined(separator: ", "))\(hint)")
            }
            top[key] = try value(of: valueNode, key: key, path: path)
        }
        return top.merging(section) { _, inner in inner }
    }

    /// "; did you mean 'tiles-base'?" for a name one or two letters away from one of `names`, else nil.
    static func suggestion(for name: String, among names: some Collection<String>) -> String? {
        let bare = name.hasPrefix("--") ? String(name.dropFirst(2)) : name
        guard let near = names.sorted().min(by: { distance(bare, $0) < distance(bare, $1) }), distance(bare, near) <= 2 else { return nil }
        return "; did you mean '\(near)'?"
    }

    private static func value(of node: Node, key: String, path: String) throws -> Value {
        switch node {
        case .scalar(let scalar):
            if let flag = node.bool, scalar.style == .plain { return .bool(flag) }
            return .text(scalar.string)
        case .sequence(let items):
            return .list(try items.map { item in
                guard let text = item.string else { throw InputError("config file \(path): '\(key)' must be a list of values") }
                return text
            })
        default:
            throw InputError("config file \(path): '\(key)' must be a value or a list of values, not a mapping")
        }
    }
}

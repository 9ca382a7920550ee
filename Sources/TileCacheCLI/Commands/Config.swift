import ArgumentParser
import Foundation

extension TileCacheCommand {
    /// `tilecache config --show COMMAND [OPTIONS]`: every option of the command with the value it would run with and
    /// where that value came from.
    struct Config: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "config",
            abstract: "Show the options a command would run with, and where each value comes from.",
            discussion: """
                Options of serve, prefetch and validate come from, in this order: the command line, environment \
                variables (TILECACHE_ and the option's name in capitals, - as _: TILECACHE_TILES_BASE, TILECACHE_PORT), \
                a YAML config file (--config FILE or $TILECACHE_CONFIG), and the defaults. Secrets (--signing-key, \
                --signing-salt, --write-token, a database URL's password) are masked.

                Example:
                  tilecache config --show serve
                  TILECACHE_PORT=9000 tilecache config --format json --show serve --config tilecache.yaml
                """)

        @Flag(help: "Show the resolved options (the only action for now, and the default).")
        var show = false

        @Option(help: "Report format: table or json.")
        var format: OutputFormat = .table

        @Argument(help: "The command (serve, prefetch or validate), then any options as you would give them to it.",
                  completion: .list(ConfigurationSources.commands))
        var command: String

        @Argument(parsing: .captureForPassthrough, help: ArgumentHelp("Options for the command.", visibility: .hidden))
        var options: [String] = []

        func validate() throws {
            guard ConfigurationSources.commands.contains(command) else {
                throw ValidationError("'\(command)' takes no configuration: choose \(ConfigurationSources.commands.joined(separator: ", "))")
            }
        }

        func run() throws {
            let console = Console.current
            let sources = try ConfigurationSources(arguments: [command] + options, environment: ProcessInfo.processInfo.environment, report: true)
            for warning in sources.warnings { console.err(warning + "\n") }
            // The command line as a whole must parse, as it would when the command ran; the values shown for what it
            // does not set are the ones the command works out (its own configuration code), not the parser's.
            let parsed = try TileCacheCommand.parseAsRoot(sources.arguments)
            let resolved = try (parsed as? any ResolvedOptions)?.resolvedValues() ?? [:]
            var entries = sources.entries
            for index in entries.indices where entries[index].source == .default {
                if let value = resolved[entries[index].option] { entries[index].value = value }
            }
            switch format {
            case .json:
                console.out(ReportJSON.encode(entries))
            case .table, .markdown:
                var table = TextTable(headers: ["option", "value", "source"])
                for entry in entries {
                    table.rows.append(["--" + entry.option, entry.value ?? "-", entry.source.rawValue + (entry.origin.map { " (\($0))" } ?? "")])
                }
                console.out(table.render(format))
            }
        }
    }
}

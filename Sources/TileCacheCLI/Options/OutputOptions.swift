import ArgumentParser

/// `--format` and `--verbose`, shared by every command that reports.
struct OutputOptions: ParsableArguments {
    @Option(help: "Report format: table, json or markdown.")
    var format: OutputFormat = .table

    @Flag(name: .shortAndLong, help: "Log details to stderr.")
    var verbose = false
}

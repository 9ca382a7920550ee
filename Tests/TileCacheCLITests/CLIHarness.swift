import Foundation
import TestSupport
import TileCacheCLI

/// What one in-process run of `tilecache` produced.
struct CLIRun {
    var code: Int32
    var out: String
    var err: String

    /// Stdout decoded as `type`, as a program reading it would (`CLIJSON` holds clients' models of the reports).
    ///
    /// - Throws: `TestFailure` naming the type and the text when it does not decode.
    func decoded<Report: Decodable>(as type: Report.Type) throws -> Report { try decode(type, from: out) }
}

/// Runs `tilecache` with `arguments` in this process, capturing stdout and stderr.
func tilecache(_ arguments: String...) async -> CLIRun {
    await tilecache(arguments)
}

func tilecache(_ arguments: [String]) async -> CLIRun {
    let (console, captured) = Console.capturing()
    let code = await Console.$current.withValue(console) { await TileCacheCommand.run(arguments: arguments) }
    return CLIRun(code: code, out: captured.out, err: captured.err)
}

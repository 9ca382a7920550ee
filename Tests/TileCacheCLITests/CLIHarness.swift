import Foundation
import TileCacheCLI

/// What one in-process run of `tilecache` produced.
struct CLIRun {
    var code: Int32
    var out: String
    var err: String

    /// stdout parsed as JSON.
    func json() throws -> Any { try JSONSerialization.jsonObject(with: Data(out.utf8)) }
    /// Stdout decoded as the report type the command prints, as a program reading it would.
    func decoded<Report: Decodable>(as type: Report.Type) throws -> Report { try JSONDecoder().decode(type, from: Data(out.utf8)) }
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

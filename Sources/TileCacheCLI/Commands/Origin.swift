import ArgumentParser
import Foundation
import ImageCore
import TileCacheOrigin

extension TileCacheCommand {
    /// `tilecache origin`: runs the built-in origin server in the foreground.
    struct Origin: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "origin",
            abstract: "Run the built-in origin server (generated element images, injectable latency and faults).",
            discussion: """
                Prints the two base URLs to pass to other commands, then serves until SIGINT or SIGTERM.
                Fault profiles: \(FaultProfile.names.joined(separator: ", ")) (see docs/origin.md).

                Examples:
                  tilecache origin --port 8080 --latency-ms 20
                  tilecache origin --faults hostile --fault '/Tiles/010/=404'
                """)

        @Option(help: "Address to bind.")
        var host = "127.0.0.1"

        @Option(help: "Port to bind (0 = any free port).")
        var port = 0

        @Option(help: "Delay added before every response, in milliseconds.")
        var latencyMs = 0

        @Option(help: "A named fault profile: \(FaultProfile.names.joined(separator: ", ")).")
        var faults = "none"

        @Option(name: .customLong("fault"), help: "An extra fault rule PATHTEXT=SPEC, e.g. '/Tiles/010/=404' (repeatable).")
        var extraFaults: [String] = []

        @Option(help: "Seed of the generated images.")
        var seed: UInt64 = 1

        func validate() throws {
            guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535, got \(port)") }
            guard latencyMs >= 0 else { throw ValidationError("--latency-ms must not be negative") }
            guard FaultProfile.rules(named: faults) != nil else {
                throw ValidationError("--faults '\(faults)' is not a profile (use \(FaultProfile.names.joined(separator: ", ")))")
            }
            _ = try parsedExtraFaults()
        }

        func parsedExtraFaults() throws -> [FaultRule] {
            try extraFaults.map { text in
                guard let equals = text.firstIndex(of: "="), let fault = Fault(argument: String(text[text.index(after: equals)...])) else {
                    throw ValidationError("--fault '\(text)' is not PATHTEXT=SPEC with a known SPEC (see docs/origin.md)")
                }
                return FaultRule(pathContains: String(text[..<equals]), fault: fault)
            }
        }

        func run() async throws {
            var configuration = OriginServer.Configuration()
            configuration.host = host
            configuration.port = port
            configuration.latency = .milliseconds(latencyMs)
            configuration.seed = seed
            configuration.faults = try parsedExtraFaults() + FaultProfile.rules(named: faults)!
            let signals = SignalWaiter(signals: [SIGINT, SIGTERM])
            await signals.ready()
            let origin: OriginServer
            do {
                origin = try await OriginServer.start(configuration)
            } catch {
                throw RuntimeError(listeningOn: host, port: port, error) ?? RuntimeError("cannot start the origin on \(host):\(port): \(error)")
            }
            let console = Console.current
            console.out("""
                origin listening on \(origin.baseURL) (latency \(latencyMs) ms, faults \(faults)\(extraFaults.isEmpty ? "" : " + \(extraFaults.count) rules"))
                --tiles-base \(origin.tilesBase)
                --images-base \(origin.imagesBase)

                """)
            let signal = await signals.next()
            console.err(signal.map { "origin: received signal \($0), stopping\n" } ?? "origin: stopping\n")
            await origin.shutdown()
            let statistics = origin.statistics
            console.err("origin: served \(statistics.requests) requests over \(statistics.connectionsAccepted) connections\n")
        }
    }
}

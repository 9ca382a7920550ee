import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport
import TileCacheCLI
import ImageCore
import TileCacheOrigin

@Suite("CLI polish: help, dry runs, only-broken, progress off a terminal", .timeLimit(.minutes(5)), .heavy)
struct CLIPolishTests {
    @Test("--help shows each default once, and never splits a paragraph at a fixed width", arguments: [
        "prefetch", "validate", "inspect", "thumbnail", "stats", "clear", "bench-cache", "serve", "origin", "demo", "config"])
    func help(command: String) async throws {
        let run = await tilecache(command, "--help")
        #expect(run.code == 0)
        // One option's help: its first line and the indented lines after it.
        var options: [String] = []
        for line in run.out.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("  -") { options.append(String(line)) } else if line.hasPrefix("      "), !options.isEmpty { options[options.count - 1] += " " + line }
        }
        for option in options {
            let defaults = option.components(separatedBy: "default").count - 1
            #expect(defaults <= 1, "\(command): \(option)")
        }
    }

    @Test("prefetch --dry-run --format json prints a JSON array of the URLs, and fetches nothing")
    func dryRunJSON() async throws {
        try await withOrigin { origin in
            let run = await tilecache("prefetch", "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase, "--elements", "1-3",
                                      "--dry-run", "--format", "json", "--no-disk-cache")
            #expect(run.code == 0)
            let urls = try run.decoded(as: [String].self)
            #expect(urls.count == 6 && urls.allSatisfy { $0.hasPrefix("http://127.0.0.1:") })
            #expect(origin.statistics.requests == 0)
        }
    }

    @Test("validate --only-broken lists only the broken URLs; the counts still cover every URL")
    func onlyBroken() async throws {
        try await withOrigin({ $0.faults = [FaultRule(pathContains: "/Tiles/002/", fault: .status(404))] }) { origin in
            let run = await tilecache("validate", "--tiles-base", origin.tilesBase, "--elements", "1-3", "--kind", "thumbnails",
                                      "--only-broken", "--format", "json")
            #expect(run.code == 2)
            let report = try run.decoded(as: CLIJSON.Validation.self)
            #expect(report.results.count == 1 && report.results[0].url.contains("/Tiles/002/"))
            #expect(report.checked == 3 && report.ok == 2)
            let table = await tilecache("validate", "--tiles-base", origin.tilesBase, "--elements", "1-3", "--kind", "thumbnails", "--only-broken")
            #expect(table.out.contains("/Tiles/002/") && !table.out.contains("/Tiles/001/"))
        }
    }

    @Test("--progress off a terminal: one line per 10% on stderr; without it, none")
    func progressLines() async throws {
        try await withOrigin { origin in
            for command in ["prefetch", "validate"] {
                let run = await tilecache(command, "--tiles-base", origin.tilesBase, "--elements", "1-20", "--kind", "thumbnails",
                                          "--no-disk-cache", "--progress")
                #expect(run.code == 0, "\(run.err)")
                let lines = run.err.split(separator: "\n").filter { $0.hasPrefix("progress: ") }
                #expect(lines.count == 10 && lines.last?.hasPrefix("progress: 100% (20/20)") == true, "\(command): \(run.err)")
                let quiet = await tilecache(command, "--tiles-base", origin.tilesBase, "--elements", "1-5", "--kind", "thumbnails",
                                            "--no-disk-cache")
                #expect(!quiet.err.contains("progress:"))
            }
        }
    }
}

@Suite("serve's request log", .timeLimit(.minutes(5)), .heavy)
struct RequestLogTests {
    @Test("--log-format json: one JSON object per request with method, path, status, bytes, duration, cache layer and request ID")
    func jsonLines() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let child = try ChildProcess(["serve", "--port", "0", "--cache-dir", directory + "/cache", "--log-format", "json",
                                              "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase])
                let out = try await child.waitForOutput(containing: "serving on http://127.0.0.1:")
                let port = try #require(out.split(separator: ":").dropFirst(2).first.flatMap { Int($0.prefix { $0.isNumber }) })
                var request = TransferRequest(url: "http://127.0.0.1:\(port)/api/v1/elements/26/thumbnail")
                request.headers = [.init("X-Request-ID", "log-test-1")]
                for _ in 0..<2 { #expect(try await TransferEngine().perform(request).status == 200) }
                child.send(SIGTERM)
                #expect(try await child.wait() == 0)
                let lines: [(text: Substring, object: JSONValue)] = child.err.split(separator: "\n").compactMap { text in
                    guard let object = try? decode(JSONValue.self, from: text), object.keys != nil else { return nil }
                    return (text, object)
                }
                #expect(!lines.isEmpty && lines.count == child.err.split(separator: "\n").count, "every stderr line is a JSON object: \(child.err)")
                let requests = try lines.filter { $0.object["message"] == .string("request") && $0.object["request_id"] == .string("log-test-1") }
                    .map { try decode(RequestLogLine.self, from: $0.text) }
                #expect(requests.count == 2, "\(child.err)")
                for line in requests {  // decoded: `duration_ms` is a number and `time` a string
                    #expect(line.method == "GET" && line.path == "/api/v1/elements/26/thumbnail")
                    #expect(line.status == 200 && line.bytes > 0)
                    #expect(line.level == "info")
                }
                #expect(requests.map(\.cache) == ["networkFetch", "memory"])
            }
        }
    }
}

/// A client's model of a request's line of `serve --log-format json` (docs/service.md, "Request IDs and logs"): the
/// keys a log collector reads, spelled as the log spells them.
private struct RequestLogLine: Decodable {
    var time: String
    var level: String
    var message: String
    var request_id: String
    var method: String
    var path: String
    var status: Int
    var bytes: Int
    var duration_ms: Double
    /// The cache layer that answered.
    var cache: String
}

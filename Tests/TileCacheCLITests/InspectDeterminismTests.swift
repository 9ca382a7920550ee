import Foundation
import ImageCore
import Testing
import TileCacheCLI
import TestSupport

/// `tilecache inspect` on the verdict corpus (real photos, their quirks, PngSuite, the origin's forms) prints the same
/// JSON at any concurrency, run after run.
///
/// `TILECACHE_VERDICT_ROUNDS` sets the rounds (default 3; `scripts/verdict-check.sh` runs 20), and
/// `TILECACHE_VERDICT_CORPUS_DIR` keeps the corpus in that folder instead of a temporary one, for peers' tools to judge.
@Suite("tilecache inspect: verdicts independent of order and concurrency", .timeLimit(.minutes(5)), .heavy)
struct InspectDeterminismTests {
    @Test("the same JSON at -j 1 and -j 16, every round")
    func sameJSON() async throws {
        let environment = ProcessInfo.processInfo.environment
        let rounds = max(1, Int(environment["TILECACHE_VERDICT_ROUNDS"] ?? "") ?? 3)
        // Seconds of CPU in a debug build: off the cooperative threads the rest of the suite shares.
        let corpus = try await BlockingWork.runLongCPUWork { try TestImages.verdictCorpus() }
        #expect(corpus.count >= 200)
        let body: (String) async throws -> Void = { directory in
            for file in corpus {
                try Data(file.bytes).write(to: URL(fileURLWithPath: directory + "/" + file.name))
            }
            let reference = await tilecache("inspect", directory, "-j", "1", "--format", "json")
            #expect(reference.code == 2)  // the corpus holds broken files
            let results = try reference.decoded(as: [CLIJSON.FileInspection].self)
            #expect(results.count == corpus.count)
            for round in 1...rounds {
                for threads in ["1", "16"] {
                    let run = await tilecache("inspect", directory, "-j", threads, "--format", "json")
                    #expect(run.code == reference.code && run.out == reference.out, "round \(round), -j \(threads)")
                }
            }
        }
        if let kept = environment["TILECACHE_VERDICT_CORPUS_DIR"] {
            try FileManager.default.createDirectory(atPath: kept, withIntermediateDirectories: true)
            try await body(kept)
        } else {
            try await withTemporaryDirectory(body)
        }
    }
}

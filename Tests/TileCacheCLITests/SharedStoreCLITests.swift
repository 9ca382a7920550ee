import Foundation
import ImageCore
import SharedStore
import Testing
import TestSupport
import TileCacheOrigin

/// `--shared-store` as a user runs it: real `tilecache` processes (the store's credentials come only from the
/// environment) against a real SeaweedFS and the built-in origin.
@Suite("tilecache with --shared-store (SeaweedFS)", .timeLimit(.minutes(5)), .heavy)
struct SharedStoreCLITests {
    @Test("prefetch fills the store; a second machine's prefetch is all sharedHits; stats lists the store's objects")
    func prefetchTwice() async throws {
        let store = try await SeaweedFS.shared()
        let bucket = "s3://cli-\(UUID().uuidString.prefix(8).lowercased())/fleet"
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let common = ["--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase, "--elements", "1-6",
                              "--kind", "thumbnails", "--format", "json", "--shared-store", bucket]
                let first = try await ChildProcess.run(["prefetch", "--cache-dir", directory + "/a", "--create-bucket"] + common,
                                                       environment: store.environment)
                #expect(first.code == 0, "\(first.err)")
                let cold = try decode(CLIJSON.Prefetch.self, from: first.out)
                #expect(cold.networkFetches == 6 && cold.sharedHits == 0)
                let coldStore = try #require(cold.sharedStore)
                #expect(coldStore.store == bucket && coldStore.status == "ok")
                #expect(coldStore.statistics.writes == 6)
                let requests = origin.statistics.requests

                let second = try await ChildProcess.run(["prefetch", "--cache-dir", directory + "/b"] + common, environment: store.environment)
                #expect(second.code == 0, "\(second.err)")
                let warm = try decode(CLIJSON.Prefetch.self, from: second.out)
                #expect(warm.sharedHits == 6 && warm.networkFetches == 0 && warm.hitRate == 1)
                #expect(origin.statistics.requests == requests, "the second machine asked the origin nothing")
                #expect(DiskCacheEntries.count(in: directory + "/b") == 6, "shared hits are written to the local disk")

                let stats = try await ChildProcess.run(["stats", "--cache-dir", directory + "/b", "--format", "json", "--shared-store", bucket],
                                                       environment: store.environment)
                #expect(stats.code == 0, "\(stats.err)")
                let summary = try #require(try decode(CLIJSON.CacheStats.self, from: stats.out).sharedStore)
                #expect(summary.objects == 6 && summary.bytes > 0 && summary.endpoint == store.endpoint)
            }
        }
    }

    @Test("validate --store --shared-store writes what it validated to the store; a prefetch elsewhere then hits it")
    func validateStores() async throws {
        let store = try await SeaweedFS.shared()
        let bucket = "s3://val-\(UUID().uuidString.prefix(8).lowercased())/fleet"
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let common = ["--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase, "--elements", "1-4",
                              "--kind", "thumbnails", "--format", "json", "--shared-store", bucket]
                let validate = try await ChildProcess.run(["validate", "--store", "--cache-dir", directory + "/a", "--create-bucket"] + common,
                                                          environment: store.environment)
                #expect(validate.code == 0, "\(validate.err)")
                #expect(try decode(CLIJSON.Validation.self, from: validate.out).ok == 4)
                let prefetch = try await ChildProcess.run(["prefetch", "--cache-dir", directory + "/b"] + common, environment: store.environment)
                #expect(prefetch.code == 0, "\(prefetch.err)")
                #expect(try decode(CLIJSON.Prefetch.self, from: prefetch.out).sharedHits == 4)
            }
        }
    }

    @Test("misconfiguration exits 1 naming the store, the endpoint and the reason; the secret is never printed")
    func misconfiguration() async throws {
        let store = try await SeaweedFS.shared()
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let catalogue = ["--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase, "--elements", "1",
                                 "--kind", "thumbnails", "--cache-dir", directory + "/cache"]
                let missing = try await ChildProcess.run(["prefetch", "--shared-store", "s3://no-such-bucket-here"] + catalogue,
                                                         environment: store.environment)
                #expect(missing.code == 1 && missing.out.isEmpty)
                #expect(missing.err.contains("s3://no-such-bucket-here") && missing.err.contains(store.endpoint)
                        && missing.err.contains("does not exist (--create-bucket creates it)"), "\(missing.err)")

                var wrong = store.environment
                wrong[SharedStoreConfiguration.Variable.secretAccessKey] = "not-the-secret"
                let forbidden = try await ChildProcess.run(["serve", "--port", "0", "--db", directory + "/f.sqlite", "--cache-dir", directory + "/cache",
                                                            "--tiles-base", origin.tilesBase, "--shared-store", "s3://any-bucket"], environment: wrong)
                #expect(forbidden.code == 1 && forbidden.err.contains("access denied") && forbidden.err.contains(store.endpoint), "\(forbidden.err)")
                #expect(!forbidden.err.contains("not-the-secret") && !forbidden.out.contains("not-the-secret"))

                let malformed = try await ChildProcess.run(["stats", "--cache-dir", directory + "/cache", "--shared-store", "s3://ok-bucket",
                                                            "--s3-endpoint", "ftp://127.0.0.1:1"], environment: store.environment)
                #expect(malformed.code == 1 && malformed.err.contains("ftp://127.0.0.1:1"), "\(malformed.err)")

                let noCredentials = try await ChildProcess.run(["prefetch", "--shared-store", "s3://ok-bucket"] + catalogue,
                                                               environment: [SharedStoreConfiguration.Variable.endpoint: store.endpoint,
                                                                             SharedStoreConfiguration.Variable.accessKeyID: "",
                                                                             SharedStoreConfiguration.Variable.secretAccessKey: ""])
                #expect(noCredentials.code == 1 && noCredentials.err.contains("AWS_ACCESS_KEY_ID"), "\(noCredentials.err)")

                let validate = try await ChildProcess.run(["validate", "--shared-store", "s3://ok-bucket"] + catalogue, environment: store.environment)
                #expect(validate.code == 1 && validate.err.contains("--shared-store applies with --store"), "\(validate.err)")
                #expect(origin.statistics.requests == 0, "nothing was fetched")
            }
        }
    }

    @Test("a store that does not answer: prefetch warms the local disk, then exits 1 saying the store was not warmed")
    func unreachable() async throws {
        try await withTemporaryDirectory { directory in
            try await withOrigin { origin in
                let run = try await ChildProcess.run(
                    ["prefetch", "--tiles-base", origin.tilesBase, "--images-base", origin.imagesBase, "--elements", "1-4",
                     "--kind", "thumbnails", "--cache-dir", directory + "/cache", "--shared-store", "s3://down/fleet"],
                    environment: [SharedStoreConfiguration.Variable.endpoint: "http://127.0.0.1:9",
                                  SharedStoreConfiguration.Variable.accessKeyID: "key", SharedStoreConfiguration.Variable.secretAccessKey: "secret"])
                #expect(run.code == 1)
                #expect(run.err.contains("starting degraded"), "said once in the log: \(run.err)")
                #expect(run.err.contains("s3://down/fleet: the warm-up of the shared store is incomplete: 4 images not written"), "\(run.err)")
                #expect(DiskCacheEntries.count(in: directory + "/cache") == 4, "the local warm-up happened")
            }
        }
    }
}

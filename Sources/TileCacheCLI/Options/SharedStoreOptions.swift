import ArgumentParser
import Foundation
import ImageCore
import SharedStore
import Logging

/// `--shared-store s3://BUCKET[/PREFIX]`, `--s3-endpoint` and `--create-bucket`: the shared cache tier of a fleet.
/// Region and credentials come only from the environment (`AWS_REGION`, `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`).
struct SharedStoreOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A shared cache tier for a fleet: an S3 bucket (and key prefix) between the local disk and the origin. Credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, region from AWS_REGION (default us-east-1).",
                               valueName: "s3://bucket[/prefix]"))
    var sharedStore: String?

    @Option(help: ArgumentHelp("The S3 endpoint (path-style), e.g. http://127.0.0.1:8333 (default: $AWS_ENDPOINT_URL_S3, else $AWS_ENDPOINT_URL, else AWS).",
                               valueName: "url"))
    var s3Endpoint: String?

    @Flag(help: "Create the --shared-store bucket when it does not exist (otherwise that is an error).")
    var createBucket = false

    func validate() throws {
        if sharedStore == nil, s3Endpoint != nil || createBucket {
            throw ValidationError("\(s3Endpoint != nil ? "--s3-endpoint" : "--create-bucket") needs --shared-store s3://BUCKET[/PREFIX]")
        }
    }

    /// The store these options and the environment describe; nil without `--shared-store`.
    ///
    /// - Throws: `RuntimeError` naming the store, the endpoint and what is wrong.
    func configuration(environment: [String: String] = ProcessInfo.processInfo.environment) throws(RuntimeError) -> SharedStoreConfiguration? {
        guard let sharedStore else { return nil }
        do {
            return try SharedStoreConfiguration(storeURL: sharedStore, endpoint: s3Endpoint, environment: environment)
        } catch {
            throw RuntimeError(error.description)
        }
    }

    /// What the store holds under its prefix (for `stats`), on a tier of its own; nil without `--shared-store`.
    ///
    /// - Throws: `RuntimeError` naming the store and the endpoint when it is misconfigured, does not answer, or
    ///   cannot be listed: a summary of a store that was not read would be a false report.
    func summary(logger: Logger) async throws(RuntimeError) -> SharedStoreSummary? {
        guard let configuration = try configuration() else { return nil }
        let tier = SharedTier(configuration: configuration, engine: TransferEngine(), logger: logger)
        do {
            try await tier.checkBucket(createBucket: createBucket)
        } catch {
            throw RuntimeError(error.description)
        }
        let health = tier.health
        guard health.status == .ok else {
            throw RuntimeError("\(configuration.storeURL) at \(configuration.endpoint): the shared store does not answer: \(health.reason ?? "no reason given")")
        }
        do {
            let (objects, bytes) = try await tier.summary()
            return SharedStoreSummary(store: configuration.storeURL, endpoint: configuration.endpoint, objects: objects, bytes: bytes)
        } catch {
            throw RuntimeError(error.description)
        }
    }

    /// Checks the bucket of `pipeline`'s shared tier (creating it with `--create-bucket`). A store that does not answer
    /// leaves the tier degraded, which the tier logs; misconfiguration is an error.
    ///
    /// - Throws: `RuntimeError` naming the store, the endpoint and the reason.
    func connect(_ pipeline: ImagePipeline) async throws(RuntimeError) {
        guard let tier = pipeline.sharedTier else { return }
        do {
            try await tier.checkBucket(createBucket: createBucket)
        } catch {
            throw RuntimeError(error.description)
        }
    }
}

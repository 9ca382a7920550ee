public import ImageCore
import Foundation

/// Where the shared cache tier lives and how to reach it: an S3 bucket (and key prefix) on an S3-compatible endpoint,
/// the region and credentials to sign with, and the tier's failure and write-queue limits.
///
/// Only the documented S3 API is used (HEAD/PUT bucket, GET/HEAD/PUT object, ListObjectsV2), path-style
/// (`ENDPOINT/BUCKET/KEY`), signed by libcurl: AWS S3, Ceph RGW, MinIO and SeaweedFS all answer it.
public struct SharedStoreConfiguration: Sendable, Hashable {
    /// The bucket.
    public var bucket: String
    /// The key prefix, without leading or trailing slash; empty for none.
    public var prefix: String
    /// `http(s)://host[:port]`, no path, no trailing slash.
    public var endpoint: String
    /// The signing region and credentials.
    public var signing: AWSSigning
    /// Consecutive failures that open the circuit (default 3).
    public var failureThreshold = 3
    /// How long the tier is skipped once open, between probes (default 5 s).
    public var probeInterval: Duration = .seconds(5)
    /// Writes waiting for the store; one more is dropped and counted (default 256).
    public var writeQueueLimit = 256
    /// Writes in flight at once (default 4).
    public var writeConcurrency = 4
    /// Connection and whole-request timeouts of a store request (default 2 s and 10 s): a slow store costs an image
    /// request at most this, once, before the circuit opens.
    public var connectTimeout: Duration = .seconds(2)
    public var requestTimeout: Duration = .seconds(10)

    /// The environment variables read, by the AWS conventions.
    public enum Variable {
        public static let endpointS3 = "AWS_ENDPOINT_URL_S3"
        public static let endpoint = "AWS_ENDPOINT_URL"
        public static let region = "AWS_REGION"
        public static let accessKeyID = "AWS_ACCESS_KEY_ID"
        public static let secretAccessKey = "AWS_SECRET_ACCESS_KEY"
    }

    /// A configuration from `s3://BUCKET[/PREFIX]`, an endpoint (`--s3-endpoint`, else `AWS_ENDPOINT_URL_S3`, else
    /// `AWS_ENDPOINT_URL`, else AWS's own `https://s3.REGION.amazonaws.com`), the region (`AWS_REGION`, default
    /// us-east-1) and the credentials (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, only from the environment).
    ///
    /// - Throws: `SharedStoreError` (`.misconfigured`) naming what is wrong: the store URL, the endpoint, or a
    ///   missing credential variable.
    public init(storeURL: String, endpoint: String?, environment: [String: String]) throws(SharedStoreError) {
        guard storeURL.hasPrefix("s3://") else {
            throw SharedStoreError(.misconfigured, store: storeURL, message: "a shared store is s3://BUCKET[/PREFIX]")
        }
        let path = storeURL.dropFirst("s3://".count)
        let bucket = String(path.prefix { $0 != "/" })
        guard Self.isValidBucketName(bucket) else {
            throw SharedStoreError(.misconfigured, store: storeURL,
                                   message: "'\(bucket)' is not an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens)")
        }
        let prefix = path.dropFirst(bucket.count).split(separator: "/").joined(separator: "/")
        guard prefix.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_./".contains($0)) }) else {
            throw SharedStoreError(.misconfigured, store: storeURL,
                                   message: "the key prefix '\(prefix)' may hold only letters, digits, '-', '_', '.' and '/'")
        }
        let region = environment[Variable.region].flatMap { $0.isEmpty ? nil : $0 } ?? "us-east-1"
        let given = endpoint ?? environment[Variable.endpointS3].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment[Variable.endpoint].flatMap { $0.isEmpty ? nil : $0 }
        let endpoint = try Self.normalisedEndpoint(given ?? "https://s3.\(region).amazonaws.com", store: storeURL)
        guard let accessKey = environment[Variable.accessKeyID], !accessKey.isEmpty else {
            throw SharedStoreError(.misconfigured, store: storeURL, endpoint: endpoint,
                                   message: "\(Variable.accessKeyID) is not set (credentials come only from the environment)")
        }
        guard let secret = environment[Variable.secretAccessKey], !secret.isEmpty else {
            throw SharedStoreError(.misconfigured, store: storeURL, endpoint: endpoint,
                                   message: "\(Variable.secretAccessKey) is not set (credentials come only from the environment)")
        }
        self.bucket = bucket
        self.prefix = prefix
        self.endpoint = endpoint
        signing = AWSSigning(region: region, accessKeyID: accessKey, secretAccessKey: secret)
    }

    /// `s3://BUCKET[/PREFIX]`.
    public var storeURL: String { "s3://\(bucket)" + (prefix.isEmpty ? "" : "/\(prefix)") }

    /// S3's bucket naming rules (the DNS-compatible ones every implementation accepts).
    static func isValidBucketName(_ name: String) -> Bool {
        guard (3...63).contains(name.count),
              name.allSatisfy({ $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-" || $0 == ".") }),
              let first = name.first, let last = name.last,
              first.isLetter || first.isNumber, last.isLetter || last.isNumber,
              !name.contains("..") else { return false }
        return true
    }

    /// `http(s)://host[:port]`, checked: a scheme, a host, a valid port, no path, query, user or fragment.
    static func normalisedEndpoint(_ text: String, store: String) throws(SharedStoreError) -> String {
        var endpoint = text
        while endpoint.hasSuffix("/") { endpoint.removeLast() }
        let malformed = { (why: String) in
            SharedStoreError(.misconfigured, store: store, endpoint: text, message: "malformed S3 endpoint: \(why)")
        }
        let target: RequestURL
        do {
            target = try RequestURL(endpoint)
        } catch {
            throw malformed(error.message)
        }
        let authority = endpoint.dropFirst(target.scheme.count + 3)
        guard !authority.contains(where: { "/?#".contains($0) }) else {
            throw malformed("give only http(s)://host[:port], without a path or query")
        }
        guard authority.last != ":" else { throw malformed("the port is empty") }
        return endpoint
    }
}

/// Why the shared store cannot be used, naming the store and the endpoint.
public struct SharedStoreError: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The options or environment are wrong (store URL, endpoint, credentials missing).
        case misconfigured
        /// The bucket does not exist (and `--create-bucket` was not given, or creating it failed).
        case bucketMissing = "bucket-missing"
        /// The store refused the credentials (403) or the request's signature.
        case forbidden
        /// The store did not answer (refused, timed out, DNS): not misconfiguration, the instance starts degraded.
        case unreachable
        /// Any other answer.
        case unexpected
    }

    public var kind: Kind
    public var store: String
    public var endpoint: String?
    public var message: String

    public init(_ kind: Kind, store: String, endpoint: String? = nil, message: String) {
        self.kind = kind
        self.store = store
        self.endpoint = endpoint
        self.message = message
    }

    public var description: String {
        "\(store)" + (endpoint.map { " at \($0)" } ?? "") + ": \(message)"
    }
}

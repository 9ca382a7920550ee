import ImageCore
import Foundation

/// The few S3 API calls the shared tier makes, over the pipeline's own transfer engine (its connection pool and
/// keep-alive), each signed by libcurl's `CURLOPT_AWS_SIGV4`.
///
/// What curl 7.88's signer leaves to the caller is done here: `x-amz-content-sha256` is computed and sent with every
/// request, the ListObjectsV2 query is sorted and percent-encoded by S3's rules, and object keys are hex hashes and
/// plain prefixes (no `+`, `=` or spaces to encode). Path-style addressing: `ENDPOINT/BUCKET/KEY`.
struct S3Client: Sendable {
    let configuration: SharedStoreConfiguration
    let engine: TransferEngine

    /// SHA-256 of nothing, the payload hash of every request without a body.
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// One object read: its bytes and its response headers (metadata is in `x-amz-meta-*`).
    struct Object: Sendable {
        var bytes: [UInt8]
        var headers: HTTPHeaders
    }

    /// A failed call: the reason (for metrics and the circuit breaker) and a message naming the request.
    struct Failure: Error, Sendable {
        /// `connect`, `timeout`, `dns`, `forbidden`, `http-5xx`, `http-4xx`, `transfer`, …
        var reason: String
        var message: String
        var status: Int?
    }

    /// `ENDPOINT/BUCKET[/KEY]`.
    func url(key: String? = nil, query: [(String, String)] = []) -> String {
        var url = configuration.endpoint + "/" + configuration.bucket
        if let key { url += "/" + key.split(separator: "/", omittingEmptySubsequences: false).map { Self.encode(String($0)) }.joined(separator: "/") }
        if !query.isEmpty {
            // Sorted by name, each name and value encoded as SigV4's canonical query wants it: what curl 7.88 signs
            // as given.
            url += "?" + query.map { (Self.encode($0.0), Self.encode($0.1)) }.sorted { $0.0 < $1.0 }
                .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        }
        return url
    }

    /// The key of `name` under the configured prefix.
    func key(_ name: String) -> String { configuration.prefix.isEmpty ? name : configuration.prefix + "/" + name }

    /// S3's URI encoding: everything but unreserved characters (A-Z a-z 0-9 - _ . ~) percent-encoded, uppercase hex.
    static func encode(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                encoded.append(Character(UnicodeScalar(byte)))
            default:
                encoded += byte < 16 ? "%0" : "%"
                encoded += String(byte, radix: 16, uppercase: true)
            }
        }
        return encoded
    }

    private func request(_ method: TransferRequest.Method, _ url: String, body: [UInt8]? = nil,
                         headers: [TransferRequest.HTTPField] = []) -> TransferRequest {
        var request = TransferRequest(url: url)
        request.method = method
        request.body = body
        request.signing = configuration.signing
        request.followsRedirects = false
        request.options.connectTimeout = configuration.connectTimeout
        request.options.totalTimeout = configuration.requestTimeout
        request.options.maxBodyBytes = 64 * 1024 * 1024
        let payloadHash = body.map { DiskCache.sha256Hex($0) } ?? Self.emptyPayloadHash
        request.headers = [TransferRequest.HTTPField("x-amz-content-sha256", payloadHash)] + headers
        return request
    }

    /// Performs a request; any status comes back (the caller decides), transfer failures become `Failure`.
    private func perform(_ request: TransferRequest) async throws(Failure) -> TransferResponse {
        do {
            return try await engine.perform(request)
        } catch {
            throw Failure(reason: error.reason.rawValue, message: "\(request.method.rawValue) \(request.url): \(error.message)")
        }
    }

    /// A failure for an unexpected status, with S3's error code when the body has one.
    private func failure(_ response: TransferResponse, _ request: TransferRequest) -> Failure {
        let code = S3XML(response.body)?.value("Error", "Code").map { " (\($0))" } ?? ""
        let reason = response.status == 403 ? "forbidden" : response.status >= 500 ? "http-5xx" : "http-\(response.status)"
        return Failure(reason: reason, message: "\(request.method.rawValue) \(request.url): HTTP \(response.status)\(code)",
                       status: response.status)
    }

    // MARK: - Calls

    /// HEAD bucket: 200 when it exists and the credentials may use it.
    func headBucket() async throws(Failure) -> Int {
        let request = request(.head, url())
        return try await perform(request).status
    }

    /// PUT bucket (CreateBucket). A bucket already owned counts as created.
    func createBucket() async throws(Failure) {
        let request = request(.put, url(), body: [])
        let response = try await perform(request)
        guard (200..<300).contains(response.status) || response.status == 409 else { throw failure(response, request) }
    }

    /// GET object; nil when there is none (404).
    func object(_ key: String) async throws(Failure) -> Object? {
        let request = request(.get, url(key: key))
        let response = try await perform(request)
        if response.status == 404 { return nil }
        guard response.status == 200 else { throw failure(response, request) }
        return Object(bytes: response.body, headers: response.headers)
    }

    /// PUT object with its content type and `x-amz-meta-*` metadata. With `ifNoneMatch`, only when there is none
    /// (S3's conditional write): false when one exists already (412).
    @discardableResult
    func put(_ key: String, bytes: [UInt8], contentType: String, metadata: [(String, String)], ifNoneMatch: Bool = false) async throws(Failure) -> Bool {
        var headers = [TransferRequest.HTTPField("Content-Type", contentType)]
        headers += metadata.map { TransferRequest.HTTPField("x-amz-meta-\($0.0)", $0.1) }
        if ifNoneMatch { headers.append(TransferRequest.HTTPField("If-None-Match", "*")) }
        let request = request(.put, url(key: key), body: bytes, headers: headers)
        let response = try await perform(request)
        if ifNoneMatch, response.status == 412 || response.status == 409 { return false }
        guard (200..<300).contains(response.status) else { throw failure(response, request) }
        return true
    }

    /// DELETE object (gone already counts as deleted).
    func delete(_ key: String) async throws(Failure) {
        let request = request(.delete, url(key: key))
        let response = try await perform(request)
        guard (200..<300).contains(response.status) || response.status == 404 else { throw failure(response, request) }
    }

    /// Objects and bytes under the configured prefix (ListObjectsV2, page by page).
    func summary() async throws(Failure) -> (objects: Int, bytes: Int) {
        var objects = 0, bytes = 0
        var token: String?
        repeat {
            var query = [("list-type", "2"), ("max-keys", "1000")]
            if !configuration.prefix.isEmpty { query.append(("prefix", configuration.prefix + "/")) }
            if let token { query.append(("continuation-token", token)) }
            let request = request(.get, url(query: query))
            let response = try await perform(request)
            guard response.status == 200 else { throw failure(response, request) }
            guard let listing = S3XML(response.body) else {
                throw Failure(reason: "bad-answer", message: "\(request.method.rawValue) \(request.url): the listing is not well-formed XML")
            }
            let sizes = listing.values("ListBucketResult", "Contents", "Size")
            objects += sizes.count
            bytes += sizes.compactMap { Int($0) }.reduce(0, +)
            token = listing.value("ListBucketResult", "IsTruncated") == "true" ? listing.value("ListBucketResult", "NextContinuationToken") : nil
        } while token != nil
        return (objects, bytes)
    }
}

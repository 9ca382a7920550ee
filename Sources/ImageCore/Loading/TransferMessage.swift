/// Response header fields in arrival order, looked up case-insensitively.
public struct HTTPHeaders: Sendable, Hashable, Sequence {
    private var fields: [(name: String, value: String)]

    /// Headers from name/value pairs.
    public init(_ fields: [(String, String)] = []) { self.fields = fields.map { (name: $0.0, value: $0.1) } }

    /// The first value of `name`, ignoring case.
    public subscript(name: String) -> String? {
        let lowered = name.lowercased()
        return fields.first { $0.name.lowercased() == lowered }?.value
    }

    mutating func append(name: String, value: String) { fields.append((name, value)) }
    mutating func removeAll() { fields.removeAll() }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for field in fields { hasher.combine(field.name); hasher.combine(field.value) }
    }
}

/// Limits and timeouts of one transfer.
public struct TransferOptions: Sendable, Hashable {
    /// Time allowed to establish the connection (default 10 s).
    public var connectTimeout: Duration = .seconds(10)
    /// Deadline for the whole transfer, counted from when it really starts (default 30 s).
    public var totalTimeout: Duration = .seconds(30)
    /// Abort when fewer than this many bytes per second arrive for `lowSpeedTime` (default 1024).
    public var lowSpeedLimit = 1024
    /// How long the speed may stay below `lowSpeedLimit` (default 10 s).
    public var lowSpeedTime: Duration = .seconds(10)
    /// Largest body accepted; enforced while streaming and at once from Content-Length (default 20 MiB).
    public var maxBodyBytes = 20 * 1024 * 1024
    /// Most redirects followed (default 10).
    public var maxRedirects = 10

    /// The defaults.
    public init() {}
}

/// One HTTP request for the transfer engine (named so as not to shadow HTTPTypes' `HTTPRequest`, which the service
/// uses): a GET of an image, or a request of the shared store's S3 API (HEAD, PUT with a body, signed).
public struct TransferRequest: Sendable, Hashable {
    /// The request methods the engine sends.
    public enum Method: String, Sendable, Hashable {
        case get = "GET", head = "HEAD", put = "PUT", delete = "DELETE"
    }

    /// An absolute http or https URL.
    public var url: String
    /// The method (default GET).
    public var method = Method.get
    /// Sends `If-None-Match` with this ETag.
    public var ifNoneMatch: String?
    /// Sends `If-Modified-Since` with this HTTP date.
    public var ifModifiedSince: String?
    /// Only the headers, no body (a HEAD).
    public var headOnly: Bool {
        get { method == .head }
        set { method = newValue ? .head : .get }
    }
    /// The body of a PUT (sent as is, with its exact length; libcurl's `Expect: 100-continue` is turned off).
    public var body: [UInt8]?
    /// More request headers, as (name, value) pairs, sent in this order.
    public var headers: [HTTPField] = []
    /// Signs the request with AWS Signature Version 4 (libcurl's `CURLOPT_AWS_SIGV4`).
    public var signing: AWSSigning?
    /// Follow redirects (default true; the S3 API never wants them followed).
    public var followsRedirects = true
    /// Which addresses the transfer may connect to (default any). A `.publicOnly` request needs an engine configured
    /// with that rule (`Downloader` keeps one for such requests); an engine for `.any` refuses it.
    public var addresses = AddressRule.any
    /// Limits and timeouts.
    public var options: TransferOptions

    /// A request header.
    public struct HTTPField: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A GET of `url`.
    public init(url: String, options: TransferOptions = TransferOptions()) {
        self.url = url
        self.options = options
    }
}

/// What libcurl signs a request with (`CURLOPT_AWS_SIGV4` and `CURLOPT_USERNAME`/`CURLOPT_PASSWORD`): TileCache has
/// no signer of its own. The secret never appears in a description or a log.
public struct AWSSigning: Sendable, Hashable, CustomStringConvertible {
    /// The region signed for, e.g. `us-east-1`.
    public var region: String
    /// The service signed for (`s3`).
    public var service: String
    /// `AWS_ACCESS_KEY_ID`.
    public var accessKeyID: String
    /// `AWS_SECRET_ACCESS_KEY`.
    public var secretAccessKey: String

    /// Credentials for `service` in `region`.
    public init(region: String, service: String = "s3", accessKeyID: String, secretAccessKey: String) {
        self.region = region
        self.service = service
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
    }

    /// libcurl's provider string: `aws:amz:REGION:SERVICE`.
    var provider: String { "aws:amz:\(region):\(service)" }

    public var description: String { "AWSSigning(region: \(region), service: \(service), accessKeyID: \(accessKeyID), secret: ***)" }
}

/// Time spent in each phase of a transfer, from libcurl's `CURLINFO_*_TIME_T`, each measured from the start.
public struct TransferTimings: Sendable, Hashable, Codable {
    /// Name resolution done.
    public var dns: Duration
    /// TCP (and TLS) connection done.
    public var connect: Duration
    /// First response byte received.
    public var firstByte: Duration
    /// Whole transfer, redirects included.
    public var total: Duration
}

/// A complete HTTP response from the transfer engine (named so as not to shadow HTTPTypes' `HTTPResponse`).
public struct TransferResponse: Sendable {
    /// The URL requested.
    public var requestedURL: String
    /// The URL of the final response, after redirects.
    public var effectiveURL: String
    /// The final status code.
    public var status: Int
    /// The final response's headers.
    public var headers: HTTPHeaders
    /// The body bytes (decoded if the server used a Content-Encoding).
    public var body: [UInt8]
    /// Phase timings.
    public var timings: TransferTimings
    /// Redirects followed.
    public var redirectCount: Int
    /// New connections this transfer opened (0 when it reused a pooled one).
    public var newConnections: Int
    /// Bytes received on the wire for the body.
    public var downloadedBytes: Int

    /// `Content-Type`, if sent.
    public var contentType: String? { headers["Content-Type"] }
    /// `Content-Length`, if sent and numeric.
    public var contentLength: Int? { headers["Content-Length"].flatMap { Int($0.trimmingWhitespace()) } }
    /// `ETag`, if sent.
    public var etag: String? { headers["ETag"] }
    /// `Last-Modified`, if sent.
    public var lastModified: String? { headers["Last-Modified"] }
    /// `Cache-Control`, if sent.
    public var cacheControl: String? { headers["Cache-Control"] }
}

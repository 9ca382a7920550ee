/// A failure anywhere in the image core: fetching, validating, decoding or caching an image.
///
/// `reason` is stable and machine-readable (reports and JSON use its `rawValue`); `subject` names the URL or path the
/// failure is about; `message` says what happened in words a person can act on.
public struct ImageCoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Why an image could not be had. The raw values are part of the public interface: never rename them.
    public enum Reason: String, Sendable, Codable, CaseIterable {
        /// The server answered with a status other than 2xx/304 (the status is in `httpStatus`).
        case httpStatus = "http-status"
        /// The host name could not be resolved.
        case dns
        /// The connection could not be made or was reset.
        case connect
        /// Every address the host resolved to is one the transfer may not connect to (`AddressRule.publicOnly`:
        /// loopback, private, link-local, ...). Never retried.
        case forbiddenAddress = "forbidden-address"
        /// A connect timeout, a low-speed abort or the total deadline.
        case timeout
        /// The body (or its announced Content-Length) exceeds the maximum size.
        case tooLarge = "too-large"
        /// The bytes are not an image (e.g. an HTML page), whatever Content-Type said.
        case notAnImage = "not-an-image"
        /// The bytes are an image the core does not decode: another format (GIF, BMP, TIFF), or a valid JPEG of a kind
        /// libjpeg-turbo does not decode here (12-bit samples, lossless or hierarchical).
        case unsupportedFormat = "unsupported-format"
        /// The image data ends early.
        case truncated
        /// The image data is damaged (bad CRC, bad entropy-coded data, bad structure).
        case corrupt
        /// Zero width or height, or more pixels than the configured limit.
        case dimensions
        /// More redirects than allowed.
        case redirectLoop = "redirect-loop"
        /// A redirect or request to a scheme other than http or https.
        case unsupportedScheme = "unsupported-scheme"
        /// The URL itself is not a valid http(s) URL.
        case invalidURL = "invalid-url"
        /// Another transfer failure reported by libcurl (TLS, protocol error, ...).
        case transfer
        /// A local file or cache I/O failure.
        case io
        /// The request was cancelled.
        case cancelled
        /// The request's own deadline (the pipeline's `requestTimeout`) passed before the image was ready.
        case deadlineExceeded = "deadline-exceeded"
        /// Too many loads were waiting already (the pipeline's `maxPendingLoads`); retry shortly.
        case overloaded
        /// The image was valid but could not be processed (resized) as asked.
        case processing
        /// The processing asked for an output beyond the limits (`ImageProcessing.maxSide`, `maxPixels`).
        case outputTooLarge = "output-too-large"
        /// The request allowed only the caches (`.returnCacheDataDontLoad`), and they do not hold the image.
        case notCached = "not-cached"
    }

    /// The stable reason code.
    public var reason: Reason
    /// The URL or file path the failure is about.
    public var subject: String
    /// A sentence a person can act on.
    public var message: String
    /// The HTTP status, for `.httpStatus` (and set where known for other reasons).
    public var httpStatus: Int?
    /// What the server sent, when a response arrived but its body was not a valid image: what a report of a broken
    /// URL shows beside the reason.
    public var received: ReceivedBody?
    /// Set by the transfer engine for transport failures worth another attempt (a body cut off by the peer).
    var isTransientTransport = false
    /// For `.httpStatus`: how long upstream said its answer may be kept, in seconds (`Cache-Control` s-maxage or
    /// max-age, else `Expires` less `Date`); 0 when it forbade keeping it (no-store, no-cache); nil when it said
    /// nothing. What a 404 or 410 is remembered for (`NegativeCache`).
    public var upstreamMaxAge: Int?
    /// Whether this answer was not asked of upstream but remembered from an earlier one (`NegativeCache`).
    public var isRemembered = false

    /// A response whose body failed validation, as far as it could be read.
    public struct ReceivedBody: Sendable, Hashable {
        /// The final HTTP status.
        public var status: Int
        /// Content-Type as served.
        public var contentType: String?
        /// Body size.
        public var byteCount: Int
        /// Format sniffed from the bytes.
        public var format: ImageFormat?
        /// Width and height when the header could be read.
        public var header: ImageHeader?
    }

    /// Creates an error about `subject`.
    public init(_ reason: Reason, subject: String, message: String, httpStatus: Int? = nil) {
        self.reason = reason
        self.subject = subject
        self.message = message
        self.httpStatus = httpStatus
    }

    public var description: String { "\(subject): \(reason.rawValue): \(message)" }

    /// The same error about another subject (used when a decoder error is attributed to a URL).
    func about(_ subject: String) -> ImageCoreError {
        var copy = self
        copy.subject = subject
        return copy
    }

    /// True for failures worth retrying: timeouts, connection failures and cut-off transfers, 5xx, 408 and 429.
    /// Whether the server said it has no such resource (HTTP 404 or 410).
    public var isNotFound: Bool { reason == .httpStatus && (httpStatus == 404 || httpStatus == 410) }

    public var isTransient: Bool {
        if isTransientTransport { return true }
        switch reason {
        case .timeout, .connect: return true
        case .httpStatus:
            guard let status = httpStatus else { return false }
            return status >= 500 || status == 408 || status == 429
        default: return false
        }
    }
}

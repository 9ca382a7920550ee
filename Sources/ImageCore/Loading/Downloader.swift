import NIOConcurrencyHelpers

/// Fetches URLs over a transfer engine of its own: at most N transfers in flight, transient failures retried with
/// backoff, every attempt inside the caller's deadline.
///
/// The one concurrency knob is `maxConcurrentTransfers`: the engine's connection limits follow from it, so they cannot
/// disagree. Identical requests are not coalesced here: the pipeline coalesces whole loads (download, decode, store).
/// A response is returned only for 2xx and 304; any other final status throws `.httpStatus`. Thread-safety: call
/// `fetch` from any number of tasks at once; the bound holds across all of them.
public final class Downloader: Sendable {
    /// Limits of the downloader.
    public struct Configuration: Sendable, Hashable {
        /// Most transfers in flight at once (default 8); the engine's connection limits follow from it (never below it).
        public var maxConcurrentTransfers = 8
        /// The User-Agent header.
        public var userAgent = TransferEngine.Configuration().userAgent
        /// Retry rules.
        public var retryPolicy = RetryPolicy()
        /// Per-transfer limits and timeouts.
        public var transferOptions = TransferOptions()

        /// The defaults.
        public init() {}
    }

    /// Counters since creation.
    public struct Statistics: Sendable, Hashable, Codable {
        /// Transfers made (each attempt counts).
        public var transfers = 0
        /// Attempts after a transient failure.
        public var retries = 0
        /// Body bytes received.
        public var bytesDownloaded = 0
    }

    /// The engine transfers run on.
    public let engine: TransferEngine
    /// The engine of transfers limited to public addresses (`TransferRequest.addresses`), made at the first: its own
    /// connection pool, so it never reuses a connection `engine` opened to an address it would refuse.
    private let publicEngine = NIOLockedValueBox<TransferEngine?>(nil)
    private let engineConfiguration: TransferEngine.Configuration
    /// The configuration.
    public let configuration: Configuration
    private let slots: AsyncSemaphore
    private let counters = NIOLockedValueBox(Statistics())

    /// A downloader with an engine of its own, whose connection limits are `maxConcurrentTransfers`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let limit = max(1, configuration.maxConcurrentTransfers)
        // The engine's connection limits follow from the transfer limit, never below it (nor below the engine's
        // defaults, 8 per host and 32 in all, so a kept-alive connection is never closed early to make room).
        var engineConfiguration = TransferEngine.Configuration()
        engineConfiguration.maxConnectionsPerHost = max(limit, engineConfiguration.maxConnectionsPerHost)
        engineConfiguration.maxTotalConnections = max(limit, engineConfiguration.maxTotalConnections)
        engineConfiguration.userAgent = configuration.userAgent
        engine = TransferEngine(configuration: engineConfiguration)
        self.engineConfiguration = engineConfiguration
        slots = AsyncSemaphore(limit: limit)
    }

    /// A snapshot of the counters.
    public var statistics: Statistics { counters.withLockedValue { $0 } }

    /// GETs `url` with the configured options.
    public func fetch(_ url: String) async throws(ImageCoreError) -> TransferResponse {
        try await fetch(TransferRequest(url: url, options: configuration.transferOptions))
    }

    /// Performs `request`, retrying transient failures.
    ///
    /// - Parameter deadline: when given, every attempt's total timeout is cut to the time left before it, and no
    ///   retry starts (or waits) past it: the transfers fit inside the caller's budget.
    /// - Throws: `.httpStatus` for a final status other than 2xx/304, `.deadlineExceeded` at the deadline, the engine's errors
    ///   otherwise.
    public func fetch(_ request: TransferRequest, deadline: ContinuousClock.Instant? = nil) async throws(ImageCoreError) -> TransferResponse {
        var random = SystemRandomNumberGenerator()
        var attempt = 1
        while true {
            var retryAfter: Duration?
            let error: ImageCoreError
            do {
                let response = try await transfer(request, deadline: deadline)
                if (200..<300).contains(response.status) || response.status == 304 { return response }
                retryAfter = RetryPolicy.parseRetryAfter(response.headers["Retry-After"])
                var answer = ImageCoreError(.httpStatus, subject: request.url,
                                            message: "HTTP \(response.status)\(Self.statusText(response.status))",
                                            httpStatus: response.status)
                answer.upstreamMaxAge = NegativeCache.upstreamMaxAge(of: response.headers)
                error = answer
            } catch let failure {
                error = failure
            }
            guard let delay = configuration.retryPolicy.delay(after: error, attempt: attempt, retryAfter: retryAfter, using: &random),
                  deadline.map({ ContinuousClock.now + delay < $0 }) ?? true else {
                throw attempt > 1 ? error.afterAttempts(attempt) : error
            }
            counters.withLockedValue { $0.retries += 1 }
            do {
                try await Task.sleep(for: delay)
            } catch {
                throw ImageCoreError(.cancelled, subject: request.url, message: "request cancelled while waiting to retry")
            }
            attempt += 1
        }
    }

    /// `request` with its total timeout cut to the time left before `deadline`.
    ///
    /// - Throws: `.deadlineExceeded` when no time is left.
    static func fitting(_ request: TransferRequest, before deadline: ContinuousClock.Instant?) throws(ImageCoreError) -> TransferRequest {
        guard let deadline else { return request }
        let left = deadline - ContinuousClock.now
        guard left > .milliseconds(1) else {
            throw ImageCoreError(.deadlineExceeded, subject: request.url, message: "the request's deadline passed before the transfer started")
        }
        var fitted = request
        fitted.options.totalTimeout = min(request.options.totalTimeout, left)
        return fitted
    }

    /// Whether `fitted`'s total timeout was cut to a deadline and is shorter than its connect and low-speed timeouts:
    /// then a timeout of the transfer can only be the deadline's.
    static func timesOutWithTheDeadline(_ fitted: TransferRequest, cutFrom request: TransferRequest) -> Bool {
        let total = fitted.options.totalTimeout
        return total < request.options.totalTimeout && total < fitted.options.connectTimeout && total < fitted.options.lowSpeedTime
    }

    /// One attempt, inside the in-flight bound, its timeout cut to the deadline once it has a slot.
    private func transfer(_ request: TransferRequest, deadline: ContinuousClock.Instant?) async throws(ImageCoreError) -> TransferResponse {
        do {
            try await slots.acquire()
        } catch {
            throw ImageCoreError(.cancelled, subject: request.url, message: "request cancelled while queued")
        }
        defer { slots.release() }
        let fitted = try Self.fitting(request, before: deadline)
        counters.withLockedValue { $0.transfers += 1 }
        let response: TransferResponse
        do {
            response = try await engine(for: fitted).perform(fitted)
        } catch where error.reason == .timeout && Self.timesOutWithTheDeadline(fitted, cutFrom: request) {
            // The only timeout that could fire is the total one cut to the deadline: that is the deadline's failure,
            // whether or not this thread's clock has reached the deadline yet when libcurl's has.
            throw ImageCoreError(.deadlineExceeded, subject: request.url,
                                 message: "the transfer, cut to the request's deadline, timed out with it (\(error.message))")
        }
        counters.withLockedValue { $0.bytesDownloaded += response.downloadedBytes }
        return response
    }

    private func engine(for request: TransferRequest) -> TransferEngine {
        guard request.addresses == .publicOnly else { return engine }
        return publicEngine.withLockedValue { made in
            if let made { return made }
            var configuration = engineConfiguration
            configuration.addresses = .publicOnly
            let engine = TransferEngine(configuration: configuration)
            made = engine
            return engine
        }
    }

    private static func statusText(_ status: Int) -> String {
        let texts = [400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 408: "Request Timeout",
                     410: "Gone", 429: "Too Many Requests", 500: "Internal Server Error", 502: "Bad Gateway",
                     503: "Service Unavailable", 504: "Gateway Timeout"]
        return texts[status].map { " \($0)" } ?? ""
    }
}

extension ImageCoreError {
    /// The same error, its message noting how many attempts were made.
    func afterAttempts(_ attempts: Int) -> ImageCoreError {
        var copy = self
        copy.message += " (after \(attempts) attempts)"
        return copy
    }
}

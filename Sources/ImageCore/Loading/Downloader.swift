import NIOConcurrencyHelpers

/// Fetches URLs over the transfer engine: at most N transfers in flight, identical concurrent requests coalesced
/// into one transfer, transient failures retried with backoff.
///
/// A response is returned only for 2xx and 304; any other final status throws `.httpStatus`. Thread-safety: call
/// `fetch` from any number of tasks at once; the bound holds across all of them.
public final class Downloader: Sendable {
    /// Limits of the downloader.
    public struct Configuration: Sendable, Hashable {
        /// Most transfers in flight at once (default 8).
        public var maxConcurrentTransfers = 8
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
        /// Requests that joined another caller's transfer instead of making their own.
        public var coalesced = 0
        /// Body bytes received.
        public var bytesDownloaded = 0
    }

    /// The engine transfers run on.
    public let engine: TransferEngine
    /// The configuration.
    public let configuration: Configuration
    private let slots: AsyncSemaphore
    private let coalescer = TaskCoalescer<HTTPRequest, HTTPResponse>()
    private let counters = NIOLockedValueBox(Statistics())

    /// A downloader over `engine` (a new engine with default limits if none is given).
    public init(engine: TransferEngine = TransferEngine(), configuration: Configuration = Configuration()) {
        self.engine = engine
        self.configuration = configuration
        slots = AsyncSemaphore(limit: max(1, configuration.maxConcurrentTransfers))
    }

    /// A snapshot of the counters.
    public var statistics: Statistics { counters.withLockedValue { $0 } }

    /// GETs `url` with the configured options.
    public func fetch(_ url: String) async throws(ImageCoreError) -> HTTPResponse {
        try await fetch(HTTPRequest(url: url, options: configuration.transferOptions))
    }

    /// Performs `request`, sharing one transfer with identical concurrent requests and retrying transient failures.
    ///
    /// - Throws: `.httpStatus` for a final status other than 2xx/304, the engine's errors otherwise.
    public func fetch(_ request: HTTPRequest) async throws(ImageCoreError) -> HTTPResponse {
        do {
            let (response, joined) = try await coalescer.run(request) { [self] in
                try await fetchWithRetries(request)
            }
            if joined { counters.withLockedValue { $0.coalesced += 1 } }
            return response
        } catch let error as ImageCoreError {
            throw error
        } catch {
            throw ImageCoreError(.cancelled, subject: request.url, message: "request cancelled")
        }
    }

    private func fetchWithRetries(_ request: HTTPRequest) async throws(ImageCoreError) -> HTTPResponse {
        var random = SystemRandomNumberGenerator()
        var attempt = 1
        while true {
            var retryAfter: Duration?
            let error: ImageCoreError
            do {
                let response = try await transfer(request)
                if (200..<300).contains(response.status) || response.status == 304 { return response }
                retryAfter = RetryPolicy.parseRetryAfter(response.headers["Retry-After"])
                error = ImageCoreError(.httpStatus, subject: request.url,
                                       message: "HTTP \(response.status)\(Self.statusText(response.status))",
                                       httpStatus: response.status)
            } catch let failure {
                error = failure
            }
            guard let delay = configuration.retryPolicy.delay(after: error, attempt: attempt, retryAfter: retryAfter, using: &random) else {
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

    /// One attempt, inside the in-flight bound.
    private func transfer(_ request: HTTPRequest) async throws(ImageCoreError) -> HTTPResponse {
        do {
            try await slots.acquire()
        } catch {
            throw ImageCoreError(.cancelled, subject: request.url, message: "request cancelled while queued")
        }
        defer { slots.release() }
        counters.withLockedValue { $0.transfers += 1 }
        let response = try await engine.perform(request)
        counters.withLockedValue { $0.bytesDownloaded += response.downloadedBytes }
        return response
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

import Foundation

/// When and how long to wait before another attempt.
///
/// Only transient failures are retried: timeouts, connection failures, bodies cut off by the peer, 5xx, 408 and 429.
/// Other 4xx never are. The wait grows exponentially with random jitter; a `Retry-After` header is honoured.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included (default 3; 1 disables retries).
    public var maxAttempts = 3
    /// Wait before the second attempt, before jitter (default 200 ms); doubles each time.
    public var baseDelay: Duration = .milliseconds(200)
    /// Longest computed wait (default 5 s).
    public var maxDelay: Duration = .seconds(5)
    /// Longest `Retry-After` honoured; a server asking for more gets no further attempt (default 30 s).
    public var maxRetryAfter: Duration = .seconds(30)

    /// The defaults.
    public init(maxAttempts: Int = 3) { self.maxAttempts = max(1, maxAttempts) }

    /// The wait before attempt `attempt + 1` after `error`, or nil when no further attempt should be made.
    func delay(after error: ImageCoreError, attempt: Int, retryAfter: Duration?,
               using random: inout some RandomNumberGenerator) -> Duration? {
        guard attempt < maxAttempts, error.isTransient else { return nil }
        if let retryAfter {
            return retryAfter <= maxRetryAfter ? retryAfter : nil
        }
        let exponential = baseDelay * (1 << min(attempt - 1, 20))
        let capped = min(exponential, maxDelay)
        // Equal jitter: half fixed, half random, so retries of many URLs spread out but never collapse to zero.
        return capped / 2 + capped / 2 * Double.random(in: 0...1, using: &random)
    }

    /// Parses `Retry-After`: delta seconds or an HTTP date.
    static func parseRetryAfter(_ value: String?, now: Date = Date()) -> Duration? {
        guard let value = value?.trimmingWhitespace(), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return .seconds(max(0, seconds)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return .milliseconds(max(0, Int(date.timeIntervalSince(now) * 1000)))
    }
}

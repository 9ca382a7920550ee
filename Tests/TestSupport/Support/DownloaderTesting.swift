public import ImageCore

extension Downloader.Configuration {
    /// Fast retries for tests.
    public static func testing(concurrency: Int = 8, attempts: Int = 3) -> Self {
        var configuration = Downloader.Configuration()
        configuration.maxConcurrentTransfers = concurrency
        configuration.retryPolicy = RetryPolicy(maxAttempts: attempts)
        configuration.retryPolicy.baseDelay = .milliseconds(20)
        configuration.retryPolicy.maxDelay = .milliseconds(100)
        configuration.transferOptions.totalTimeout = TestTime.scaled(.seconds(10))
        configuration.transferOptions.lowSpeedTime = TestTime.scaled(.seconds(10))
        return configuration
    }
}

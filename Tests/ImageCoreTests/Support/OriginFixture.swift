import ImageCore
import TestSupport
import TileCacheOrigin

extension Downloader.Configuration {
    /// Fast retries for tests.
    static func testing(concurrency: Int = 8, attempts: Int = 3) -> Self {
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

extension Result where Failure == ImageCoreError {
    var failureReason: ImageCoreError.Reason? {
        if case .failure(let error) = self { return error.reason }
        return nil
    }
}

extension Downloader {
    /// The outcome of fetching `url`, as a value tests can inspect.
    func result(_ url: String) async -> Result<TransferResponse, ImageCoreError> {
        do { return .success(try await fetch(url)) } catch { return .failure(error) }
    }
}

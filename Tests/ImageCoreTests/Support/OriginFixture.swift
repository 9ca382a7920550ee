import ImageCore
import TestSupport
import TileCacheOrigin

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

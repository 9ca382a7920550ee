import Foundation

/// A fresh directory under the system temp directory, removed when `body` returns.
public func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = NSTemporaryDirectory() + "tilecache-test-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

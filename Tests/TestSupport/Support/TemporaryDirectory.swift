import Foundation

/// A fresh directory under the system temp directory; whoever asked removes it.
public func makeTemporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "tilecache-test-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A fresh directory under the system temp directory, removed when `body` returns.
public func withTemporaryDirectory<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try await body(path)
}

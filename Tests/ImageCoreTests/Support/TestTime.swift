import Foundation

/// Deadlines in tests, stretched by `TILECACHE_TEST_TIME_SCALE` (make test-sanitize sets it: sanitizers slow every
/// process down several times, and a deadline is a claim about the code, not about the sanitizer).
enum TestTime {
    static let scale = Double(ProcessInfo.processInfo.environment["TILECACHE_TEST_TIME_SCALE"] ?? "") ?? 1
    static func scaled(_ duration: Duration) -> Duration { duration * scale }
}

import Foundation

/// Deadlines in tests, stretched by `TILECACHE_TEST_TIME_SCALE` (make test-sanitize sets it: sanitizers slow every
/// process down several times, and a deadline is a claim about the code, not about the sanitizer).
public enum TestTime {
    /// The stretch factor (1 unless the environment says otherwise).
    public static let scale = Double(ProcessInfo.processInfo.environment["TILECACHE_TEST_TIME_SCALE"] ?? "") ?? 1
    /// `duration` stretched by `scale`.
    public static func scaled(_ duration: Duration) -> Duration { duration * scale }
}

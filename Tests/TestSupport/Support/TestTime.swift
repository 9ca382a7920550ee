import Foundation

/// Deadlines in tests, stretched by `TILECACHE_TEST_TIME_SCALE` (make test-sanitize sets it: sanitizers slow every
/// process down several times, and a deadline is a claim about the code, not about the sanitizer).
public enum TestTime {
    /// The stretch factor (1 unless the environment says otherwise).
    public static let scale = Double(ProcessInfo.processInfo.environment["TILECACHE_TEST_TIME_SCALE"] ?? "") ?? 1
    /// `duration` stretched by `scale`.
    public static func scaled(_ duration: Duration) -> Duration { duration * scale }
}

/// Waits until `condition` holds, checking it every 10 ms; throws `TestFailure` naming `what` when it does not within
/// `timeout` (scaled by `TestTime`). The way a test waits for an event it cannot be told of: never a fixed sleep.
public func waitUntil(_ what: String, within timeout: Duration = .seconds(10), _ condition: @Sendable () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + TestTime.scaled(timeout)
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw TestFailure("\(what): not within \(TestTime.scaled(timeout))") }
        try await Task.sleep(for: .milliseconds(10))
    }
}

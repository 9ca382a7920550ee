import Foundation
@testable import ImageCore
public import Testing

/// What a test that starts servers or child processes, or computes for seconds, takes before it starts: one of
/// `slots` places. Swift Testing starts every test of the suite at once (its default parallelism); on two cores, 300
/// tests each starting an origin, a service and a pipeline (or a `tilecache` child) made every one of them wait for the
/// CPU until their own deadlines (libcurl's low-speed limit, a client's timeout) passed. A bound on what the tests use,
/// as a database pool bounds connections, keeps each test's wait short; tests that need none of it run beside them
/// freely.
public struct HeavyTestTrait: TestTrait, SuiteTrait, TestScoping {
    /// Places for heavy tests at once: twice the cores, at least 4.
    public static let slots = max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)
    private static let places = AsyncSemaphore(limit: slots)

    public var isRecursive: Bool { true }

    /// Each test case takes a place; a suite does not (its tests do).
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> HeavyTestTrait? {
        testCase == nil ? nil : self
    }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await Self.places.acquire()
        defer { Self.places.release() }
        try await function()
    }
}

extension Trait where Self == HeavyTestTrait {
    /// The test starts servers or child processes, or computes for seconds: it waits for one of
    /// `HeavyTestTrait.slots` places (see `HeavyTestTrait`).
    public static var heavy: Self { HeavyTestTrait() }
}

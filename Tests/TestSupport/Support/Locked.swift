import NIOConcurrencyHelpers

/// A value that concurrent tasks of one test read and change (a reference, so task closures can capture it).
public final class Locked<Value: Sendable>: Sendable {
    private let box: NIOLockedValueBox<Value>

    public init(_ value: Value) { box = NIOLockedValueBox(value) }

    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T { try box.withLockedValue(body) }

    /// The value now.
    public var value: Value { box.withLockedValue { $0 } }
}

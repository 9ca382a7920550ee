import NIOConcurrencyHelpers

extension NIOLockedValueBox {
    /// `withLockedValue` keeping the closure's typed error (NIO's version is `rethrows`, which erases it to `any Error`).
    func withLockedValueTyped<T, E: Error>(_ body: (inout Value) throws(E) -> T) throws(E) -> T {
        try withLockedValue { value in Result { () throws(E) -> T in try body(&value) } }.get()
    }
}

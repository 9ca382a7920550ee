import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// Waits for one of the given signals without letting their default action end the process; the default comes back
/// when the waiter goes away.
final class SignalWaiter: Sendable {
    /// libdispatch sources are thread-safe objects, though not marked Sendable; these are made in init and only
    /// cancelled in deinit, so no two threads ever use them at once.
    private struct Sources: @unchecked Sendable { var all: [any DispatchSourceSignal] }

    private let stream: AsyncStream<Int32>
    private let sources: Sources
    private let signals: [Int32]

    init(signals: [Int32]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.stream = stream
        self.signals = signals
        sources = Sources(all: signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        })
    }

    deinit {
        for source in sources.all { source.cancel() }
        for number in signals { signal(number, SIG_DFL) }
    }

    /// The next signal, or nil when the waiting task is cancelled.
    func next() async -> Int32? {
        var iterator = stream.makeAsyncIterator()
        return await iterator.next()
    }
}

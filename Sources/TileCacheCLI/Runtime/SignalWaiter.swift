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
    /// Left by each source once libdispatch has registered it (see `ready()`).
    private let registered = DispatchGroup()

    init(signals: [Int32]) {
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        self.stream = stream
        self.signals = signals
        let registered = registered
        sources = Sources(all: signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            // libdispatch merges signals that arrive before the handler runs into one call (`data` counts them): each
            // is yielded, so a second Ctrl-C that came while the first was being handled is not lost. (The handler
            // holds its source; cancelling the source in deinit releases the handler.)
            source.setEventHandler { for _ in 0..<max(1, source.data) { continuation.yield(number) } }
            source.resume()
            return source
        })
    }

    deinit {
        for source in sources.all { source.cancel() }
        for number in signals { signal(number, SIG_DFL) }
    }

    /// Returns once every signal is watched. `resume()` registers a source with libdispatch asynchronously, and until
    /// then the signal is ignored (`SIG_IGN`): a Ctrl-C in that moment was lost (an exit test whose first signal came
    /// at once saw it, under load).
    func ready() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            registered.notify(queue: .global()) { done.resume() }
        }
    }

    /// The next signal, or nil when the waiting task is cancelled.
    func next() async -> Int32? {
        var iterator = stream.makeAsyncIterator()
        return await iterator.next()
    }
}

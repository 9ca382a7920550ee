import NIOCore

/// The idle timeout of a connection or an HTTP/2 stream, kept by a handler on its event loop with the rules of
/// Hummingbird's `HTTPConnectionStateHandler`, for the fast path's handlers, which answer before it (HTTP/1) or without
/// it (an HTTP/2 stream): the channel is closed once nothing was read or answered (`touch`) for `timeout`. The check is
/// made when that time would be up; if `exempt` says so then (an answer is being made), the channel stays open and no
/// check follows until the next `start`.
final class IdleTimeout {
    private let timeout: TimeAmount
    private var lastActive = NIODeadline.now()
    private var timer: Scheduled<Void>?
    /// Whether the channel is not to be closed for being idle now: then no check follows until `start`.
    var exempt: () -> Bool = { false }

    init(_ timeout: TimeAmount) { self.timeout = timeout }

    /// Whether a check is scheduled.
    var isRunning: Bool { timer != nil }

    /// Something was read or answered now.
    func touch() { lastActive = .now() }

    /// Something was read or answered now, and a check is scheduled for when the timeout would be up, if none is.
    func start(context: ChannelHandlerContext) {
        touch()
        scheduleCheck(context: context)
    }

    func stop() {
        timer?.cancel()
        timer = nil
    }

    private func scheduleCheck(context: ChannelHandlerContext) {
        guard timer == nil else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: lastActive + timeout) { [self] in
            timer = nil
            guard context.channel.isActive, !exempt() else { return }
            if NIODeadline.now() >= lastActive + timeout { context.close(promise: nil) } else { scheduleCheck(context: context) }
        }
    }
}

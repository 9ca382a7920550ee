import Foundation
import ImageCore
import NIOConcurrencyHelpers

/// A live progress line on stderr (only when stderr is a terminal): done/total, rate, hits, failures, ETA.
final class ProgressBar: Sendable {
    private let console: Console
    private let lastDraw = NIOLockedValueBox<ContinuousClock.Instant?>(nil)
    /// Whether a line is drawn and not yet ended.
    private let lineOpen = NIOLockedValueBox(false)

    init(console: Console) { self.console = console }

    var isEnabled: Bool { console.errIsTerminal }

    func update(_ progress: PrefetchProgress) {
        guard isEnabled else { return }
        let now = ContinuousClock.now
        let due = lastDraw.withLockedValue { last -> Bool in
            if progress.done < progress.total, let last, now - last < .milliseconds(100) { return false }
            last = now
            return true
        }
        guard due else { return }
        let seconds = max(progress.elapsed.inSeconds, 0.001)
        let rate = Double(progress.done) / seconds
        let remaining = rate > 0 ? Double(progress.total - progress.done) / rate : 0
        let width = 24
        let filled = progress.total == 0 ? width : width * progress.done / progress.total
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        console.err(String(format: "\r[%@] %d/%d  %.0f/s  hits %d  failures %d  ETA %.0fs ", bar, progress.done, progress.total,
                           rate, progress.hits, progress.failures, remaining))
        lineOpen.withLockedValue { $0 = true }
        if progress.done == progress.total { finish() }
    }

    /// Ends a line left open (the run stopped before its last URL), so what is printed next starts on its own line.
    func finish() {
        let open = lineOpen.withLockedValue { open in
            defer { open = false }
            return open
        }
        if open { console.err("\n") }
    }
}

import Foundation
import ImageCore
import NIOConcurrencyHelpers

/// Progress on stderr: done/total, rate, hits, failed (and expected missing, once there is one), ETA. On a terminal a
/// live line redrawn at most every 100 ms; off a terminal, when asked (`--progress`), one plain line per 10% so a CI
/// log stays short.
///
/// The counts are the run's own (`PrefetchProgress.counts`), as its report will have them: an image upstream is known
/// to lack is expected missing, not failed.
final class ProgressBar: Sendable {
    enum Mode: Sendable {
        /// A live line when stderr is a terminal, nothing otherwise.
        case onTerminal
        /// The live line on a terminal, lines per 10% elsewhere.
        case always
        /// Nothing.
        case off
    }

    private let console: Console
    private let mode: Mode
    private let lastDraw = NIOLockedValueBox<ContinuousClock.Instant?>(nil)
    /// Whether a line is drawn and not yet ended.
    private let lineOpen = NIOLockedValueBox(false)
    /// The last tenth reported off a terminal.
    private let lastTenth = NIOLockedValueBox(0)

    init(console: Console, mode: Mode = .onTerminal) {
        self.console = console
        self.mode = mode
    }

    var isEnabled: Bool { mode == .always || (mode == .onTerminal && console.errIsTerminal) }

    func update(_ progress: PrefetchProgress) {
        guard isEnabled else { return }
        guard console.errIsTerminal else { return logLine(progress) }
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
        console.err(String(format: "\r[%@] %d/%d  %.0f/s  %@  ETA %.0fs ", bar, progress.done, progress.total, rate,
                           Self.counts(progress), remaining))
        lineOpen.withLockedValue { $0 = true }
        if progress.done == progress.total { finish() }
    }

    /// A plain line each time another tenth of the work is done.
    private func logLine(_ progress: PrefetchProgress) {
        guard progress.total > 0 else { return }
        let tenth = progress.done * 10 / progress.total
        let due = lastTenth.withLockedValue { last -> Bool in
            guard tenth > last else { return false }
            last = tenth
            return true
        }
        guard due else { return }
        let rate = Double(progress.done) / max(progress.elapsed.inSeconds, 0.001)
        console.err(String(format: "progress: %d%% (%d/%d)  %.0f/s  %@\n", tenth * 10, progress.done, progress.total, rate,
                           Self.counts(progress)))
    }

    /// `hits 3  failed 1`, and `  expected missing 2` once there is one: the words and numbers of the report.
    static func counts(_ progress: PrefetchProgress) -> String {
        let counts = progress.counts
        return "hits \(counts.hits)  failed \(counts.failed)" + (counts.expectedMissing > 0 ? "  expected missing \(counts.expectedMissing)" : "")
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

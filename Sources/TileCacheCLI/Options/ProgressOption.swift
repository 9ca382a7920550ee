import ArgumentParser

/// `--progress`/`--no-progress` of the commands that draw progress (prefetch, validate).
struct ProgressOption: ParsableArguments {
    @Flag(inversion: .prefixedNo,
          help: "Progress on stderr (default: a live line on a terminal, nothing elsewhere). --progress forces it off a terminal too, as one line per 10% (for CI logs); --no-progress turns it off.")
    var progress: Bool?

    /// The progress line for `console`, as asked.
    func bar(_ console: Console) -> ProgressBar {
        ProgressBar(console: console, mode: progress.map { $0 ? .always : .off } ?? .onTerminal)
    }
}

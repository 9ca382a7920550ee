import Foundation

/// A task executor backed by one dedicated thread.
///
/// The origin runs its accept loop and connection handlers here, so its timing does not depend on the Swift cooperative
/// pool that the code under test (and CPU-heavy tests beside it) keeps busy. Its injected delays wait on the event
/// loop's timers (`OriginResponder.pause`): a `Task.sleep` wakes through a job on that pool, whatever executor waits.
///
/// `@unchecked Sendable`: `jobs` and `stopping` are only touched with `condition` locked.
final class OriginExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopping = false

    init(name: String) {
        // The thread's block holds the executor until `stop()` lets `run()` return.
        let thread = Thread { self.run() }
        thread.name = name
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread finish once every queued job has run.
    func stop() {
        condition.lock()
        stopping = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping { condition.wait() }
            if jobs.isEmpty && stopping {
                condition.unlock()
                return
            }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}

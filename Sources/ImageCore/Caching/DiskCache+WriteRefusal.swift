import NIOConcurrencyHelpers
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The breaker for a file system that refuses writes (full, over quota, read-only, no permission): a refused write
/// turns writing off with one warning; entries already stored are still read. A write is tried again every
/// `writeRetryInterval`, and once such a retry succeeds writing resumes (a write that began before the refusal and
/// happens to fit says nothing about the next one).
extension DiskCache {
    /// Turns writing off until `writeRetryInterval` has passed; the first refusal in a row logs the one warning.
    func refuseWrites(_ reason: String) {
        let first = state.withLockedValue { state in
            defer { state.refusal = (reason, ContinuousClock.now + writeRetryInterval) }
            state.statistics.refusedWrites += 1
            return state.refusal == nil
        }
        guard first else { return }
        logger.warning("""
            the disk cache cannot be written: running without storing to it (entries already stored are still read), \
            trying again every \(writeRetryInterval)
            """, metadata: ["directory": "\(directory)", "reason": "\(reason)"])
    }

    /// Errors that refuse every write to the directory, not just one file's.
    static func refusesAllWrites(_ code: Int32) -> Bool {
        [ENOSPC, EDQUOT, EROFS, EACCES, EPERM].contains(code)
    }

    /// Whether a write may go ahead now: not while writing is off; past the retry time it may, as the retry.
    func admitWrite() -> (skip: Bool, retrying: Bool) {
        state.withLockedValue { state -> (Bool, Bool) in
            guard let refusal = state.refusal else { return (false, false) }
            guard ContinuousClock.now < refusal.retryAt else { return (false, true) }
            state.statistics.skippedWrites += 1
            return (true, false)
        }
    }
}

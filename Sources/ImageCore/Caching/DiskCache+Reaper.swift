import Logging
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// What opening a cache for writing cleans up: temp files of writers that died, and an index that disagrees with the
/// entries directory (a crash between a rename and its commit, a cache from before the index).
extension DiskCache {
    /// Deletes the `.tmp-PID-*` files among `names` whose writing process no longer exists.
    func removeAbandonedTempFiles(_ names: [String]) {
        for name in names where name.hasPrefix(".tmp-") {
            let pidText = name.dropFirst(5).prefix { $0 != "-" }
            guard let pid = Int32(pidText) else { unlinkLogging(entriesDirectory + "/" + name); continue }
            if pid == getpid() { continue }
            if kill(pid, 0) == -1 && errno == ESRCH {
                unlinkLogging(entriesDirectory + "/" + name)
                logger.info("removed an abandoned temp file", metadata: ["path": "\(entriesDirectory)/\(name)"])
            }
        }
    }

    /// Makes the index and the entries directory agree (caller: the writable initialiser): files the index lacks are
    /// added with their size and access time (a crash between a rename and its commit, a cache from before the index),
    /// rows whose file is gone are dropped; then evicts down to the limit. O(n) in the entries, once per open.
    ///
    /// - Parameter names: the entries directory's names, listed before (the transaction waits for other writers, so a
    ///   file one of them moves into place meanwhile may be missing from the list: its row stays, and its file is
    ///   found at the next open if it is missing then).
    func reconcile(_ names: [String]) throws(ImageCoreError) {
        guard let index else { return }
        let evicted: Int
        do {
            evicted = try index.write { transaction in
                // A writer that ended without releasing its cache (killed, or a commit that failed after a rename) may
                // have left a row with another size than its file's: then every size is checked, once.
                let unclean = try transaction.registerWriter(getpid())
                var indexed = Set(try transaction.allNames())
                for name in names where name.hasSuffix(".tce") {
                    var info = stat()
                    guard indexed.remove(name) == nil else {
                        if unclean, stat(entriesDirectory + "/" + name, &info) == 0 { try transaction.resize(name, to: Int(info.st_size)) }
                        continue
                    }
                    guard stat(entriesDirectory + "/" + name, &info) == 0 else { continue }
                    let access = Int64(info.st_atim.tv_sec) * 1_000_000_000 + Int64(info.st_atim.tv_nsec)
                    try transaction.upsert(name, size: Int(info.st_size), lastAccess: access)
                }
                for name in indexed where access(entriesDirectory + "/" + name, F_OK) != 0 { try transaction.delete(name) }
                let evicted = try transaction.evict(downTo: sizeLimit)
                for row in evicted { unlinkLogging(entriesDirectory + "/" + row.name) }
                return evicted.count
            }
        } catch {
            throw ImageCoreError(.io, subject: index.path, message: "cannot update the cache index: \(DiskCacheIndex.describe(error))")
        }
        state.withLockedValue { $0.statistics.evictions += evicted }
    }
}

import ArgumentParser
import Foundation
import ImageCore

/// `--cache-dir`, shared by every command that has a disk cache.
///
/// The directory is `--cache-dir`, else `$TILECACHE_CACHE_DIR`, else `cache`. An empty or blank one is refused: it
/// would put the cache's files in the file system's root.
struct CacheDirectoryOption: ParsableArguments {
    @Option(name: .customLong("cache-dir"), help: "Disk cache directory (default: $TILECACHE_CACHE_DIR, else cache/).")
    var given: String?

    /// The directory to use (`validate()` has refused a blank variable, so `DiskCache`'s default is the variable or
    /// `cache`).
    var path: String { given ?? DiskCache.defaultDirectory }

    func validate() throws {
        if let given {
            guard !given.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ValidationError("--cache-dir '\(given)' is empty: give a directory")
            }
        } else if let variable = ProcessInfo.processInfo.environment[DiskCache.directoryVariable],
                  variable.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("\(DiskCache.directoryVariable) is set but empty: give it a directory, or unset it")
        }
    }
}

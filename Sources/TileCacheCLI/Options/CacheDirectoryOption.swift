import ArgumentParser
import Foundation

/// `--cache-dir`, shared by every command that has a disk cache.
///
/// The directory is `--cache-dir`, else `$TILECACHE_CACHE_DIR`, else `cache`. An empty or blank one is refused: it
/// would put the cache's files in the file system's root.
struct CacheDirectoryOption: ParsableArguments {
    @Option(name: .customLong("cache-dir"), help: "Disk cache directory (default: $TILECACHE_CACHE_DIR, else cache/).")
    var given: String?

    /// The variable that names the default directory.
    static let environmentVariable = "TILECACHE_CACHE_DIR"

    /// The directory to use.
    var path: String {
        given ?? ProcessInfo.processInfo.environment[Self.environmentVariable] ?? "cache"
    }

    func validate() throws {
        if let given {
            guard !given.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ValidationError("--cache-dir '\(given)' is empty: give a directory")
            }
        } else if let variable = ProcessInfo.processInfo.environment[Self.environmentVariable],
                  variable.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("\(Self.environmentVariable) is set but empty: give it a directory, or unset it")
        }
    }
}

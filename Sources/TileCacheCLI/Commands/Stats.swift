import ArgumentParser
import Foundation
import ImageCore
import SharedStore
import Logging

extension TileCacheCommand {
    /// `tilecache stats`: what the disk cache (and the shared store) holds, and the last runs.
    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stats",
            abstract: "Show what the disk cache holds and the last runs with their hit rates.",
            discussion: """
                With --shared-store, also the objects and bytes the shared store holds under its prefix (a store that \
                does not answer is then an error, exit 1).

                Example:
                  tilecache stats --cache-dir cache --last 5
                  tilecache stats --verify
                  tilecache stats --shared-store s3://tilecache/fleet --s3-endpoint http://127.0.0.1:8333
                """)

        @OptionGroup var cacheDirectory: CacheDirectoryOption

        @Option(help: "How many of the latest runs to show.")
        var last = 10

        @Flag(help: "Read every entry, check its checksum and decode it; remove damaged ones (exit code 2 if any).")
        var verify = false

        @OptionGroup var sharedStore: SharedStoreOptions

        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard last >= 0 else { throw ValidationError("--last must not be negative") }
        }

        func run() async throws {
            let cacheDir = cacheDirectory.path
            try CacheSummary.requireDirectory(cacheDir)
            var verification: DiskCache.Verification?
            if verify, FileManager.default.fileExists(atPath: cacheDir + "/entries") {
                do {
                    verification = try await DiskCache(directory: cacheDir, sizeLimit: .max).verifyAll()
                } catch {
                    throw RuntimeError("\(error.subject): \(error.message)")
                }
            } else if verify {
                // No entries directory (nothing was ever stored, or a first run was killed before storing): nothing to
                // verify and nothing wrong, said as such rather than by leaving the report's verification out.
                verification = DiskCache.Verification()
            }
            var summary = try await CacheSummary(cacheDirectory: cacheDir, lastRuns: last)
            summary.verification = verification
            var logger = Logger(label: "tilecache") { StreamLogHandler.standardError(label: $0) }
            logger.logLevel = .error
            summary.sharedStore = try await sharedStore.summary(logger: logger)
            Console.current.out(output.format == .json ? ReportJSON.encode(summary) : summary.render(output.format))
            if let verification, verification.removed > 0 { throw brokenFound }
        }
    }

    /// `tilecache clear`: empties the disk cache.
    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "clear",
            abstract: "Empty the disk cache (asks first unless --yes; off a terminal, --yes is required).",
            discussion: """
                Removes every cached image; the run log is kept. Without --yes it asks on the terminal; with no terminal \
                (a script, a pipe) it removes nothing and exits 1 unless --yes is given.

                Example:
                  tilecache clear --cache-dir cache --yes
                """)

        @OptionGroup var cacheDirectory: CacheDirectoryOption

        @Flag(name: .shortAndLong, help: "Do not ask.")
        var yes = false

        func run() async throws {
            let console = Console.current
            let cacheDir = cacheDirectory.path
            guard FileManager.default.fileExists(atPath: cacheDir + "/entries") else {
                console.err("\(cacheDir): no disk cache here; nothing to clear\n")
                return
            }
            let cache: DiskCache
            do {
                cache = try DiskCache(directory: cacheDir, sizeLimit: .max)
            } catch {
                throw RuntimeError("\(error.subject): \(error.message)")
            }
            let (count, bytes) = (await cache.count, await cache.totalBytes)
            if !yes {
                // Off a terminal nobody sees the question: a script must say --yes.
                guard console.errIsTerminal else {
                    throw InputError("""
                        not removing \(count) cached images (\(ByteSize.format(bytes))) from \(cacheDir) without asking, and \
                        there is no terminal to ask on: add --yes
                        """)
                }
                console.err("Remove \(count) cached images (\(ByteSize.format(bytes))) from \(cacheDir)? [y/N] ")
                guard let answer = console.readLine()?.lowercased(), answer == "y" || answer == "yes" else {
                    console.err("nothing removed\n")
                    return
                }
            }
            do {
                try await cache.removeAll()
            } catch {
                throw RuntimeError("\(error.subject): \(error.message)")
            }
            console.out("removed \(count) cached images (\(ByteSize.format(bytes))) from \(cacheDir)\n")
        }
    }
}

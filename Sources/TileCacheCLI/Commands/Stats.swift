import ArgumentParser
import Foundation
import ImageCore

extension TileCacheCommand {
    /// `tilecache stats`: what the disk cache holds, and the last runs.
    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show what the disk cache holds and the last runs with their hit rates.",
            discussion: """
                Example:
                  tilecache stats --cache-dir cache --last 5
                  tilecache stats --verify
                """)

        @OptionGroup var cacheDirectory: CacheDirectoryOption

        @Option(help: "How many of the latest runs to show.")
        var last = 10

        @Flag(help: "Read every entry, check its checksum and decode it; remove damaged ones (exit code 2 if any).")
        var verify = false

        @OptionGroup var output: OutputOptions

        func validate() throws {
            guard last >= 0 else { throw ValidationError("--last must not be negative") }
        }

        func run() async throws {
            let cacheDir = cacheDirectory.path
            var verification: DiskCache.Verification?
            if verify, FileManager.default.fileExists(atPath: cacheDir + "/entries") {
                do {
                    verification = try DiskCache(directory: cacheDir, sizeLimit: .max).verifyAll()
                } catch {
                    throw RuntimeError("\(error.subject): \(error.message)")
                }
            }
            var summary = try CacheSummary(cacheDirectory: cacheDir, lastRuns: last)
            summary.verification = verification
            Console.current.out(output.format == .json ? ReportJSON.encode(summary) : summary.render(output.format))
            if let verification, verification.removed > 0 { throw brokenFound }
        }
    }

    /// `tilecache clear`: empties the disk cache.
    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Empty the disk cache (asks first on a terminal unless --yes).",
            discussion: """
                Removes every cached image; the run log is kept.

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
            let count = cache.count, bytes = cache.totalBytes
            if !yes, console.errIsTerminal {
                console.err("Remove \(count) cached images (\(ByteSize.format(bytes))) from \(cacheDir)? [y/N] ")
                guard let answer = console.readLine()?.lowercased(), answer == "y" || answer == "yes" else {
                    console.err("nothing removed\n")
                    return
                }
            }
            do {
                try cache.removeAll()
            } catch {
                throw RuntimeError("\(error.subject): \(error.message)")
            }
            console.out("removed \(count) cached images (\(ByteSize.format(bytes))) from \(cacheDir)\n")
        }
    }
}

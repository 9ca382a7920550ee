import Foundation
import Logging
import NIOConcurrencyHelpers

/// Which URL serves an image asked for under another spelling (`cesium.jpg` served by `caesium.jpg`): what this
/// process found, and what the disk cache remembers for every process that uses it (read once per URL).
///
/// Thread-safety: any task may call it; the map is behind a lock, and the disk cache does its own I/O.
final class AliasBook: Sendable {
    /// Found aliases, and URLs whose disk entry this process has read (alias or not).
    private struct Known {
        var aliases: [String: String] = [:]
        var lookedUp: Set<String> = []
    }

    private let known = NIOLockedValueBox(Known())
    private let disk: DiskCache?
    private let logger: Logger

    init(disk: DiskCache?, logger: Logger) {
        self.disk = disk
        self.logger = logger
    }

    /// The URL remembered as serving `url`'s image, by this process or (read once) by the disk cache.
    func alias(of url: String) async -> String? {
        if let known = inMemory(url) { return known }
        var stored: String?
        if let disk { stored = await disk.alias(for: url) }
        known.withLockedValue {
            $0.lookedUp.insert(url)
            if $0.aliases[url] == nil { $0.aliases[url] = stored }
        }
        return stored
    }

    /// What this process knows of `url`'s alias without reading the disk: `.some(alias)` (nil: none) once it is
    /// known, nil when the disk cache's entry has not been read yet.
    func inMemory(_ url: String) -> String?? {
        known.withLockedValue { known in
            if let alias = known.aliases[url] { return .some(alias) }
            return known.lookedUp.contains(url) ? .some(nil) : nil
        }
    }

    /// The URL that serves `url`'s image as far as this process knows now: a remembered alias, else `url`.
    func servingURL(of url: String, alternatives: [String]) async -> String {
        guard !alternatives.isEmpty else { return url }
        return await alias(of: url) ?? url
    }

    /// Remembers (or, with nil, forgets) an alias in this process, and in the disk cache when `persist`.
    func remember(_ alias: String?, of url: String, persist: Bool) async {
        known.withLockedValue {
            $0.aliases[url] = alias
            $0.lookedUp.insert(url)
        }
        if persist, let disk {
            do {
                try await disk.rememberAlias(alias, for: url)
            } catch {
                logger.warning("could not remember an alias in the disk cache", metadata: ["url": "\(url)", "reason": "\(error.message)"])
            }
        }
        if let alias { logger.debug("image found under another spelling", metadata: ["url": "\(url)", "servedBy": "\(alias)"]) }
    }
}

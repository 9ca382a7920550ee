import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Aliases: which URL serves an image under another spelling (`cesium.jpg` served by `caesium.jpg`), remembered in
/// `aliases.json` beside the entries for every process that uses the directory.
extension DiskCache {
    /// The file remembering which URL serves an image under another spelling (`aliases.json`: URL to URL).
    var aliasesPath: String { directory + "/aliases.json" }

    /// The URL that served `url`'s image under another spelling (see `rememberAlias`), or nil.
    public func alias(for url: String) async -> String? {
        await BlockingWork.run { self.readAliases()[url] }
    }

    /// Remembers that `url`'s image is served by `target` (nil forgets it), for every process using this directory.
    ///
    /// - Throws: `.io` naming the file when it cannot be written; the previous file is left intact.
    public func rememberAlias(_ target: String?, for url: String) async throws(ImageCoreError) {
        try await BlockingWork.run { () throws(ImageCoreError) in try self.writeAlias(target, for: url) }
    }

    /// See `rememberAlias(_:for:)`.
    func writeAlias(_ target: String?, for url: String) throws(ImageCoreError) {
        try refuseIfReadOnly(aliasesPath)
        try withLock { () throws(ImageCoreError) in
            var aliases = self.readAliases()
            guard aliases[url] != target else { return }
            aliases[url] = target
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            let bytes: [UInt8]
            do {
                bytes = [UInt8](try encoder.encode(aliases))
            } catch {
                throw ImageCoreError(.io, subject: self.aliasesPath, message: "cannot encode the aliases: \(error)")
            }
            let temp = self.newTempPath()
            do throws(WriteFailure) {
                try self.write(bytes, to: temp)
            } catch {
                switch error {
                case .refused(let reason): throw ImageCoreError(.io, subject: self.aliasesPath, message: reason)
                case .failed(let failure): throw failure
                }
            }
            guard rename(temp, self.aliasesPath) == 0 else {
                let reason = String(cString: strerror(errno))
                unlink(temp)
                throw ImageCoreError(.io, subject: self.aliasesPath, message: "cannot move the alias file into place: \(reason)")
            }
        }
    }

    /// The remembered aliases; empty when the file is missing, and (with a warning) when it cannot be read or parsed:
    /// it is a cache, and a lost alias is found again.
    func readAliases() -> [String: String] {
        do {
            guard let bytes = try LocalFile.read(aliasesPath, upTo: .max), !bytes.isEmpty else { return [:] }
            return try JSONDecoder().decode([String: String].self, from: Data(bytes))
        } catch let error as ImageCoreError {
            logger.warning("cannot read the aliases file", metadata: ["path": "\(aliasesPath)", "reason": "\(error.message)"])
        } catch {
            logger.warning("the aliases file is not a JSON object of URLs", metadata: ["path": "\(aliasesPath)", "reason": "\(error)"])
        }
        return [:]
    }


    /// Forgets every alias (`removeAll`).
    ///
    /// - Throws: `.io` naming the file when it exists and cannot be removed.
    func removeAliases() throws(ImageCoreError) {
        try withLock { () throws(ImageCoreError) in
            guard unlink(self.aliasesPath) == 0 || errno == ENOENT else {
                throw ImageCoreError(.io, subject: self.aliasesPath, message: "cannot remove the alias file: \(String(cString: strerror(errno)))")
            }
        }
    }
}

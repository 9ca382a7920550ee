import Foundation

/// `verifyAll`: every entry read, checked and decoded (`tilecache stats --verify`).
extension DiskCache {
    /// The outcome of `verifyAll`.
    public struct Verification: Sendable, Hashable, Codable {
        /// An entry that failed verification.
        public struct Failure: Sendable, Hashable, Codable {
            /// The entry file's path.
            public var path: String
            /// The URL the entry was stored for, when its header could still be read.
            public var url: String?
            /// Why it failed: "checksum mismatch", "the file is cut short", or the decoder's reason.
            public var reason: String

            /// A failure of the entry at `path`.
            public init(path: String, url: String?, reason: String) {
                self.path = path
                self.url = url
                self.reason = reason
            }
        }

        /// Entries whose checksum matched and whose bytes decoded.
        public var valid = 0
        /// Entries whose file was damaged or whose bytes no longer decode: removed (kept when opened read-only).
        public var removed = 0
        /// The entries counted in `removed`, each with its path, URL and reason.
        public var failures: [Failure] = []
        /// Temp files left in the entries directory (a writer is running, or one crashed).
        public var tempFiles = 0
        /// Total size of the entries after verification.
        public var totalBytes = 0

        /// Nothing verified yet (a cache with no entries directory has nothing else to report).
        public init() {}
    }

    /// Reads every entry file, verifies its checksum and decodes it with `inspector` (a format it does not
    /// decode: the checksum only);
    /// removes what fails (unless opened read-only), naming each in `failures`.
    ///
    /// - Throws: `.io` when the entries directory cannot be listed or an entry file cannot be read (not for files
    ///   removed meanwhile).
    public func verifyAll(inspector: ImageInspector = ImageInspector()) async throws(ImageCoreError) -> Verification {
        try await BlockingWork.run { () throws(ImageCoreError) in try self.verifyEntries(inspector: inspector) }
    }

    /// See `verifyAll(inspector:)`.
    func verifyEntries(inspector: ImageInspector) throws(ImageCoreError) -> Verification {
        var verification = Verification()
        let names = try LocalDirectory.names(in: entriesDirectory)
        verification.tempFiles = names.filter { $0.hasPrefix(".tmp-") }.count
        for name in names.sorted() where name.hasSuffix(".tce") {
            let path = entriesDirectory + "/" + name
            guard let file = try LocalFile.read(path, upTo: .max) else { continue }  // removed meanwhile
            let reason: String
            switch DiskCacheFile.decode(file, expectedURL: nil) {
            case .success(let entry):
                // An entry in a format the inspector does not decode is checked by its SHA-256 alone.
                guard entry.metadata.format.isDecodable else { verification.valid += 1; continue }
                do {
                    _ = try inspector.validate(entry.bytes, subject: entry.metadata.url, contentType: entry.metadata.contentType)
                    verification.valid += 1
                    continue
                } catch {
                    reason = "\(error.reason.rawValue): \(error.message)"
                }
            case .failure(.damaged(let why)):
                reason = why
            case .failure(.otherURL):
                reason = "the entry is for another URL"  // not reached: no URL is expected here
            }
            let url = DiskCacheFile.metadataLength(file).flatMap { length in
                file.count >= 8 + length ? DiskCacheFile.decodeMetadata(Array(file.prefix(8 + length)))?.url : nil
            }
            if !isReadOnly { removeFile(named: name) }
            verification.removed += 1
            verification.failures.append(Verification.Failure(path: path, url: url, reason: reason))
        }
        verification.totalBytes = totals.bytes
        return verification
    }
}

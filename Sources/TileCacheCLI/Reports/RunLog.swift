public import Foundation

/// The run log: one JSON object a line in `<cache-dir>/runs.jsonl`, appended after every prefetch run.
public enum RunLog {
    /// One logged run.
    public struct Entry: Sendable, Codable, Equatable {
        /// When the run ended.
        public var date: Date
        /// The command, e.g. `prefetch`.
        public var command: String
        /// The run's report.
        public var report: PrefetchReport
    }

    /// The log file of a cache directory.
    public static func path(cacheDirectory: String) -> String { cacheDirectory + "/runs.jsonl" }

    /// Appends `entry`; the log is a convenience, so a failure to write it is returned, not thrown.
    @discardableResult
    public static func append(_ entry: Entry, cacheDirectory: String) -> String? {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var line = try? encoder.encode(entry) else { return "cannot encode the run log entry" }
        line.append(UInt8(ascii: "\n"))
        let path = path(cacheDirectory: cacheDirectory)
        try? FileManager.default.createDirectory(atPath: cacheDirectory, withIntermediateDirectories: true)
        if !FileManager.default.fileExists(atPath: path) {
            guard FileManager.default.createFile(atPath: path, contents: nil) else { return "\(path): cannot create the run log" }
        }
        guard let handle = FileHandle(forWritingAtPath: path) else { return "\(path): cannot open the run log" }
        defer { try? handle.close() }
        do {
            try handle.seekToEnd()
            try handle.write(contentsOf: line)
        } catch {
            return "\(path): cannot append to the run log: \(error)"
        }
        return nil
    }

    /// The entries of a cache directory's log, oldest first; unreadable lines are skipped.
    public static func entries(cacheDirectory: String) -> [Entry] {
        guard let data = FileManager.default.contents(atPath: path(cacheDirectory: cacheDirectory)) else { return [] }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return data.split(separator: UInt8(ascii: "\n")).compactMap { try? decoder.decode(Entry.self, from: Data($0)) }
    }
}

import ArgumentParser
import Foundation
import Logging

/// How `serve` writes its log to stderr.
enum LogFormat: String, CaseIterable, ExpressibleByArgument {
    /// swift-log's stream format.
    case text
    /// One JSON object per line: time, level, label, message and the metadata's keys.
    case json

    func logger(label: String) -> Logger {
        switch self {
        case .text: Logger(label: label) { StreamLogHandler.standardError(label: $0) }
        case .json: Logger(label: label) { JSONLogHandler(label: $0) }
        }
    }
}

/// A swift-log handler writing one JSON object per line to stderr, for log collectors (swift-log has none of its own).
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var object: [String: Any] = [:]
        let merged = metadata.merging(metadataProvider?.get() ?? [:]) { $1 }.merging(event.metadata ?? [:]) { $1 }
        for (key, value) in merged { object[key] = Self.json(value) }
        object["time"] = Date().formatted(.iso8601.year().month().day().timeZone(separator: .omitted).time(includingFractionalSeconds: true).timeSeparator(.colon).dateSeparator(.dash))
        object["level"] = event.level.rawValue
        object["label"] = label
        object["message"] = event.message.description
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0A)
        FileHandle.standardError.write(line)
    }

    private static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible):
            // Numbers stay JSON numbers (status, bytes, duration_ms); anything else is its description.
            if let number = convertible as? Int { number } else if let number = convertible as? Double { number } else { convertible.description }
        case .array(let items): items.map(json)
        case .dictionary(let entries): entries.mapValues(json)
        }
    }
}

public import Logging
import NIOConcurrencyHelpers

/// A logger whose messages a test can read back.
public struct CapturedLog: Sendable {
    public struct Message: Sendable {
        public var level: Logger.Level
        public var text: String
        public var metadata: [String: String]
    }

    private let box = NIOLockedValueBox<[Message]>([])

    public init() {}

    /// A logger writing into this capture (every level).
    public var logger: Logger {
        var logger = Logger(label: "test") { _ in Handler(box: box) }
        logger.logLevel = .trace
        return logger
    }

    /// The messages logged so far.
    public var messages: [Message] { box.withLockedValue { $0 } }
    /// The warnings (and worse) logged so far.
    public var warnings: [Message] { messages.filter { $0.level >= .warning } }

    private struct Handler: LogHandler {
        let box: NIOLockedValueBox<[Message]>
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            box.withLockedValue { $0.append(Message(level: event.level, text: "\(event.message)",
                                                    metadata: merged.mapValues { "\($0)" })) }
        }
    }
}

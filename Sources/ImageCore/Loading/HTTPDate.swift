public import Foundation
import NIOConcurrencyHelpers

/// HTTP dates (RFC 9110 IMF-fixdate), as Last-Modified and If-Modified-Since carry them.
///
/// Thread-safety: any thread; one formatter behind a lock (DateFormatter is not thread-safe).
public enum HTTPDate {
    private static let formatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }()
    private static let lock = NIOLockedValueBox(())

    /// `date` as an IMF-fixdate.
    public static func string(from date: Date) -> String { lock.withLockedValue { _ in formatter.string(from: date) } }
    /// The date an IMF-fixdate names, nil when `string` is not one.
    public static func date(from string: String) -> Date? { lock.withLockedValue { _ in formatter.date(from: string) } }
}

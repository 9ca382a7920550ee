public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// HTTP dates (RFC 9110, section 5.6.7), as Last-Modified, If-Modified-Since and Date carry them.
///
/// Written as IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`); read in all three forms a recipient must accept:
/// IMF-fixdate, the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime's (`Sun Nov  6 08:49:37 1994`).
/// Pure functions over `gmtime_r` and `timegm`: no formatter, no lock, any thread. (Foundation's `DateFormatter` needed a
/// lock, under which ThreadSanitizer reported an access race; `Date.HTTPFormatStyle` is not in this toolchain's Linux
/// Foundation.)
public enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let longDays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `date` as an IMF-fixdate (whole seconds, rounded down).
    public static func string(from date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return "Thu, 01 Jan 1970 00:00:00 GMT" }  // out of range
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = Int(parts.tm_year) + 1900
        let yearText = year >= 1000 ? "\(year)" : String(repeating: "0", count: 4 - "\(year)".count) + "\(year)"
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(yearText) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    /// The date an HTTP-date names (any of the three forms), nil when `string` is none of them or names no real time.
    public static func date(from string: String) -> Date? {
        date(from: string, now: Date())
    }

    /// `date(from:)`, with the time that decides the century of an RFC 850 two-digit year.
    static func date(from string: String, now: Date) -> Date? {
        let words = string.split(separator: " ", omittingEmptySubsequences: true)
        // IMF-fixdate: "Sun," "06" "Nov" "1994" "08:49:37" "GMT"
        if words.count == 6, words[0].hasSuffix(","), days.contains(String(words[0].dropLast())), words[5] == "GMT",
           words[1].count == 2, words[3].count == 4, let day = number(words[1]), let month = months.firstIndex(of: String(words[2])),
           let year = number(words[3]) {
            return make(year: year, month: month, day: day, time: words[4])
        }
        // RFC 850: "Sunday," "06-Nov-94" "08:49:37" "GMT"
        if words.count == 4, words[0].hasSuffix(","), longDays.contains(String(words[0].dropLast())), words[3] == "GMT" {
            let parts = words[1].split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].count == 2, parts[2].count == 2, let day = number(parts[0]),
                  let month = months.firstIndex(of: String(parts[1])), let twoDigits = number(parts[2]) else { return nil }
            // RFC 9110: a two-digit year more than 50 years in the future is the most recent past year with those digits.
            var parts2 = tm()
            var seconds = time_t(now.timeIntervalSince1970)
            guard gmtime_r(&seconds, &parts2) != nil else { return nil }
            let thisYear = Int(parts2.tm_year) + 1900
            var year = thisYear - thisYear % 100 + twoDigits
            if year > thisYear + 50 { year -= 100 }
            return make(year: year, month: month, day: day, time: words[2])
        }
        // asctime: "Sun" "Nov" "6" "08:49:37" "1994" (the day padded with a space, so split ignores runs of spaces)
        if words.count == 5, days.contains(String(words[0])), let month = months.firstIndex(of: String(words[1])),
           (1...2).contains(words[2].count), let day = number(words[2]), words[4].count == 4, let year = number(words[4]) {
            return make(year: year, month: month, day: day, time: words[3])
        }
        return nil
    }

    /// The value of a run of ASCII digits (no sign, no spaces), else nil.
    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text)
    }

    /// The time `hh:mm:ss` on that day, UTC; nil for a day or time that does not exist.
    private static func make(year: Int, month: Int, day: Int, time: Substring) -> Date? {
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
              let hour = number(clock[0]), let minute = number(clock[1]), let second = number(clock[2]),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second), (1...31).contains(day) else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(min(second, 59))  // a leap second names the last second of its minute
        let seconds = timegm(&parts)
        // timegm normalises 31 Feb to 3 Mar: a date that moved did not exist.
        guard parts.tm_mday == Int32(day), parts.tm_mon == Int32(month) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}

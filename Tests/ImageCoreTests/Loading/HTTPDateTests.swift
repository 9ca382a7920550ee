import Foundation
@testable import ImageCore
import Testing
import TestSupport

/// HTTP dates against Python's email.utils (formatdate, parsedate_to_datetime): a reference implementation no one here
/// wrote, over seeded random times in all three forms RFC 9110 makes a recipient accept.
@Suite("HTTPDate", .timeLimit(.minutes(5)), .heavy)
struct HTTPDateTests {
    @Test("IMF-fixdate, RFC 850 and asctime forms agree with Python's email.utils for 2,000 seeded random times")
    func agreesWithPython() async throws {
        // A fixed linear congruential sequence: the same times every run.
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        let times: [Int] = (0..<2_000).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % 4_102_444_800  // 1970 to 2100
        } + [0, 86_399, 951_782_400, 1_709_164_800, 4_102_444_799]  // the epoch, leap days (2000, 2024), 2099's end
        try await withTemporaryDirectory { directory in
            try times.map(String.init).joined(separator: "\n").write(toFile: directory + "/times", atomically: true, encoding: .utf8)
            try await runPythonClient("http_dates.py", [directory + "/times", directory + "/out"])
            let rows = try String(contentsOfFile: directory + "/out", encoding: .utf8).split(separator: "\n")
            #expect(rows.count == times.count)
            // RFC 850's two-digit years, read as RFC 9110 says, relative to a fixed "now" (2026-11-24).
            let now = Date(timeIntervalSince1970: 1_795_996_800)
            for row in rows {
                let fields = row.split(separator: "\t").map(String.init)
                let time = try #require(Int(fields[0]))
                let date = Date(timeIntervalSince1970: TimeInterval(time))
                #expect(HTTPDate.string(from: date) == fields[1], "\(time)")
                #expect(Int(fields[4]) == time, "Python reads back its own \(fields[1])")
                #expect(HTTPDate.date(from: fields[1]) == date, "\(fields[1])")
                #expect(HTTPDate.date(from: fields[3]) == date, "\(fields[3])")
                let year = 1970 + time / 31_556_952
                if year > 2026 - 50 && year <= 2026 + 50 {
                    #expect(HTTPDate.date(from: fields[2], now: now) == date, "\(fields[2])")
                }
            }
        }
    }

    @Test("what is no HTTP-date, or names no real time, is nil")
    func rejects() {
        for text in ["", "yesterday", "Sat, 31 Feb 2025 00:00:00 GMT", "Sat, 01 Nov 2025 24:00:00 GMT", "Sat, +1 Nov 2025 00:00:00 GMT",
                     "Sat, 01 Nov 2025 00:00:00 UTC", "Sat, 01 Nov 2025 0:00:00 GMT", "Foo, 01 Nov 2025 00:00:00 GMT",
                     "Sat, 01 Now 2025 00:00:00 GMT", "Saturday, 01-Nov-2025 00:00:00 GMT", "Sat Nov 32 00:00:00 2025"] {
            #expect(HTTPDate.date(from: text) == nil, "\(text)")
        }
        #expect(HTTPDate.date(from: "Sat, 01 Nov 2025 00:00:00 GMT") == Date(timeIntervalSince1970: 1_761_955_200))
    }

    @Test("many threads format and parse at once: no lock to contend on, the same answers")
    func concurrent() async {
        let date = Date(timeIntervalSince1970: 1_761_955_200)
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    (0..<2_000).allSatisfy { _ in
                        HTTPDate.string(from: date) == "Sat, 01 Nov 2025 00:00:00 GMT"
                            && HTTPDate.date(from: "Sat, 01 Nov 2025 00:00:00 GMT") == date
                    }
                }
            }
            for await ok in group { #expect(ok) }
        }
    }
}

public import ArgumentParser
import Foundation

/// How a report is printed.
public enum OutputFormat: String, CaseIterable, Sendable, ExpressibleByArgument {
    /// Aligned columns for people.
    case table
    /// One JSON document for programs.
    case json
    /// A Markdown table for release notes and issues.
    case markdown
}

/// Renders rows as aligned text or a Markdown table.
struct TextTable {
    var headers: [String]
    var rows: [[String]] = []
    /// Columns aligned to the right (numbers).
    var rightAligned: Set<Int> = []

    func render(_ format: OutputFormat) -> String {
        switch format {
        case .markdown:
            var lines = ["| " + headers.joined(separator: " | ") + " |"]
            lines.append("|" + headers.indices.map { rightAligned.contains($0) ? "---:|" : "---|" }.joined())
            for row in rows {
                lines.append("| " + row.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |")
            }
            return lines.joined(separator: "\n") + "\n"
        case .table, .json:
            let widths = headers.indices.map { column in
                ([headers[column]] + rows.map { column < $0.count ? $0[column] : "" }).map(\.count).max() ?? 0
            }
            func line(_ cells: [String]) -> String {
                cells.enumerated().map { column, cell in
                    let pad = String(repeating: " ", count: max(0, widths[column] - cell.count))
                    return rightAligned.contains(column) ? pad + cell : cell + pad
                }.joined(separator: "  ").trimmingTrailingSpaces()
            }
            return ([line(headers)] + rows.map(line)).joined(separator: "\n") + "\n"
        }
    }
}

extension String {
    func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}

/// JSON for reports: sorted keys, pretty-printed, slashes unescaped.
enum ReportJSON {
    static func encode(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        // Encoding plain report structs cannot fail.
        let data = (try? encoder.encode(value)) ?? Data("null".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }
}

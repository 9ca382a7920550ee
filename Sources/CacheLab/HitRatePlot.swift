import Foundation

/// Draws hit-rate curves as a standalone SVG: one panel per sweep (count limits, byte limits), cache size on a
/// logarithmic x axis, hit rate on the y axis, one line per policy, a legend, and the target as a dashed line.
public enum HitRatePlot {
    /// The SVG document for `results` of the trace called `title`.
    public static func svg(_ results: [HitRateResult], title: String, target: Double?) -> String {
        let byCount = results.filter { $0.byteLimit == nil && $0.countLimit != nil }
        let byBytes = results.filter { $0.countLimit == nil && $0.byteLimit != nil }
        let panels = [(byCount, "memory cache size, entries (no byte limit)", { (n: Int) in "\(n)" }),
                      (byBytes, "memory cache size, bytes (no count limit)", formatBytes)]
            .filter { !$0.0.isEmpty }
        let panelWidth = 460.0, panelHeight = 300.0, left = 60.0, top = 70.0, gap = 80.0
        let width = left + Double(max(1, panels.count)) * (panelWidth + gap)
        let height = top + panelHeight + 110
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>
            <text x="\(left)" y="28" font-size="16" font-weight="bold">\(escape(title))</text>
            <text x="\(left)" y="48" fill="#555">Share of requests served from the memory cache (higher is better); \
            Belady is the best any cache could do with the same room.</text>

            """
        let policies = CachePolicy.allCases.filter { policy in results.contains { $0.policy == policy } }
        for (index, panel) in panels.enumerated() {
            let x0 = left + Double(index) * (panelWidth + gap)
            svg += drawPanel(panel.0, x0: x0, y0: top, width: panelWidth, height: panelHeight, axisTitle: panel.1,
                             label: panel.2, policies: policies, target: target)
        }
        // Legend, under the panels.
        var legendX = left
        let legendY = top + panelHeight + 78
        for policy in policies {
            let style = Self.style(policy)
            svg += """
                <line x1="\(legendX)" y1="\(legendY - 4)" x2="\(legendX + 28)" y2="\(legendY - 4)" stroke="\(style.color)" \
                stroke-width="2.5"\(style.dash.map { " stroke-dasharray=\"\($0)\"" } ?? "")/>
                <text x="\(legendX + 34)" y="\(legendY)">\(style.label)</text>

                """
            legendX += 34 + Double(style.label.count) * 6.6 + 26
        }
        return svg + "</svg>\n"
    }

    private static func drawPanel(_ results: [HitRateResult], x0: Double, y0: Double, width: Double, height: Double,
                                  axisTitle: String, label: (Int) -> String, policies: [CachePolicy], target: Double?) -> String {
        let sizeOf = { (result: HitRateResult) in result.countLimit ?? result.byteLimit ?? 1 }
        let sizes = Array(Set(results.map(sizeOf))).sorted()
        let low = log(Double(sizes.first ?? 1)), high = log(Double(sizes.last ?? 1))
        func x(_ size: Int) -> Double {
            high == low ? x0 + width / 2 : x0 + (log(Double(size)) - low) / (high - low) * width
        }
        func y(_ rate: Double) -> Double { y0 + height - rate * height }
        var svg = "<g>\n"
        for tick in stride(from: 0.0, through: 1.0, by: 0.2) {
            svg += """
                <line x1="\(x0)" y1="\(y(tick))" x2="\(x0 + width)" y2="\(y(tick))" stroke="#ddd"/>
                <text x="\(x0 - 8)" y="\(y(tick) + 4)" text-anchor="end">\(Int((tick * 100).rounded()))%</text>

                """
        }
        for size in sizes {
            svg += """
                <line x1="\(x(size))" y1="\(y0 + height)" x2="\(x(size))" y2="\(y0 + height + 5)" stroke="#333"/>
                <text x="\(x(size))" y="\(y0 + height + 19)" text-anchor="middle">\(label(size))</text>

                """
        }
        svg += """
            <rect x="\(x0)" y="\(y0)" width="\(width)" height="\(height)" fill="none" stroke="#333"/>
            <text x="\(x0 + width / 2)" y="\(y0 + height + 42)" text-anchor="middle">\(escape(axisTitle))</text>
            <text x="\(x0 - 44)" y="\(y0 + height / 2)" text-anchor="middle" transform="rotate(-90 \(x0 - 44) \(y0 + height / 2))">hit rate</text>

            """
        if let target {
            svg += """
                <line x1="\(x0)" y1="\(y(target))" x2="\(x0 + width)" y2="\(y(target))" stroke="#999" stroke-dasharray="6 4"/>
                <text x="\(x0 + width - 4)" y="\(y(target) - 5)" text-anchor="end" fill="#666">target \(Int((target * 100).rounded()))%</text>

                """
        }
        for policy in policies {
            let points = results.filter { $0.policy == policy }.sorted { sizeOf($0) < sizeOf($1) }
            guard !points.isEmpty else { continue }
            let style = Self.style(policy)
            let path = points.map { "\(rounded(x(sizeOf($0)))),\(rounded(y($0.hitRate)))" }.joined(separator: " ")
            svg += """
                <polyline points="\(path)" fill="none" stroke="\(style.color)" stroke-width="2.5"\
                \(style.dash.map { " stroke-dasharray=\"\($0)\"" } ?? "")/>

                """
            for point in points {
                svg += """
                    <circle cx="\(rounded(x(sizeOf(point))))" cy="\(rounded(y(point.hitRate)))" r="3.5" fill="\(style.color)">\
                    <title>\(style.label) at \(label(sizeOf(point))): \(String(format: "%.1f", point.hitRate * 100))%</title></circle>

                    """
            }
        }
        return svg + "</g>\n"
    }

    private static func style(_ policy: CachePolicy) -> (color: String, dash: String?, label: String) {
        switch policy {
        case .lru: ("#d62728", nil, "LRU (TileCache MemoryCache)")
        case .tinylfu: ("#ff7f0e", "6 2 1 2", "W-TinyLFU (TileCache MemoryCache)")
        case .fifo: ("#1f77b4", "8 4", "FIFO")
        case .sieve: ("#2ca02c", "3 3", "SIEVE")
        case .belady: ("#333333", "1 4", "Belady (optimal)")
        }
    }

    /// `512 KiB`, `10 MiB`, `1.5 GiB`.
    public static func formatBytes(_ bytes: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB"]
        var value = Double(bytes), unit = 0
        while value >= 1024, unit < units.count - 1 { value /= 1024; unit += 1 }
        return value == value.rounded() ? "\(Int(value)) \(units[unit])" : "\(String(format: "%.1f", value)) \(units[unit])"
    }

    private static func rounded(_ value: Double) -> String { String(format: "%.1f", value) }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}

internal import Foundation
internal import StudyMetrics

/// Horizontal bar charts as inline SVG, drawn when the report is written: they show without script, print,
/// and survive a mail client. One bar per row, with its interval as a whisker.
enum BarChart {
    struct Bar {
        /// Text (escaped here).
        let label: String
        /// Nil draws the row without a bar: "–".
        let estimate: Estimate?
    }

    static let width = 360.0, labelWidth = 110.0, valueWidth = 70.0, rowHeight = 24.0

    /// `domain` is the axis; `format` writes values (text); `title` names the chart (text).
    static func svg(title: String, bars: [Bar], domain: ClosedRange<Double>, format: (Double) -> String) -> String {
        let plot = width - labelWidth - valueWidth
        let span = max(domain.upperBound - domain.lowerBound, .leastNonzeroMagnitude)
        func x(_ value: Double) -> Double { labelWidth + (min(max(value, domain.lowerBound), domain.upperBound) - domain.lowerBound) / span * plot }
        let height = Double(bars.count) * rowHeight + 22
        var svg = "<svg class=\"chart\" role=\"img\" viewBox=\"0 0 \(n(width)) \(n(height))\" width=\"\(n(width))\" height=\"\(n(height))\" xmlns=\"http://www.w3.org/2000/svg\"><title>\(esc(title))</title>"
        for (row, bar) in bars.enumerated() {
            let top = Double(row) * rowHeight + 2, middle = Double(row) * rowHeight + 2 + rowHeight / 2 - 2
            svg += "<text x=\"0\" y=\"\(n(middle + 4))\">\(esc(bar.label))</text>"
            guard let estimate = bar.estimate else {
                svg += "<text class=\"muted\" x=\"\(n(labelWidth + 4))\" y=\"\(n(middle + 4))\">–</text>"
                continue
            }
            let end = x(estimate.value)
            svg += "<rect class=\"bar\" x=\"\(n(labelWidth))\" y=\"\(n(top + 3))\" width=\"\(n(max(end - labelWidth, 1)))\" height=\"\(n(rowHeight - 10))\"><title>\(esc(bar.label)): \(esc(format(estimate.value)))</title></rect>"
            var right = end
            if let interval = estimate.interval {
                let low = x(interval.low), high = x(interval.high)
                right = max(right, high)
                svg += "<path class=\"whisker\" d=\"M\(n(low)) \(n(middle))H\(n(high))M\(n(low)) \(n(middle - 5))V\(n(middle + 5))M\(n(high)) \(n(middle - 5))V\(n(middle + 5))\"><title>\(esc(format(interval.low)))–\(esc(format(interval.high)))</title></path>"
            }
            svg += "<text x=\"\(n(right + 4))\" y=\"\(n(middle + 4))\">\(esc(format(estimate.value)))</text>"
        }
        let axis = Double(bars.count) * rowHeight + 4
        svg += "<line class=\"axis\" x1=\"\(n(labelWidth))\" y1=\"\(n(axis))\" x2=\"\(n(labelWidth + plot))\" y2=\"\(n(axis))\"/>"
        svg += "<text class=\"muted\" x=\"\(n(labelWidth))\" y=\"\(n(axis + 14))\">\(esc(format(domain.lowerBound)))</text>"
        svg += "<text class=\"muted\" x=\"\(n(labelWidth + plot))\" y=\"\(n(axis + 14))\" text-anchor=\"end\">\(esc(format(domain.upperBound)))</text>"
        return svg + "</svg>"
    }

    /// A coordinate with at most one decimal.
    static func n(_ value: Double) -> String {
        let text = String(format: "%.1f", value)
        return text.hasSuffix(".0") ? String(text.dropLast(2)) : text
    }
}

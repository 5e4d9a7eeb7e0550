internal import FaceAnalysis
internal import SessionModel
internal import WireProtocol
internal import Foundation
internal import SessionAnalysis

/// One analysed session in a report, with what the sections need to refer to it.
struct ReportedSession {
    let analysis: AnalyzedSession
    /// How the report names the session: its test user, else its name.
    let label: String
    /// Report-relative file of each screenshot, by index.
    let shotFiles: [String]
    /// Session start (first event): times in the report count from here.
    let start: Double
    /// The session's voice in the report directory, and where the report's time 0 is in it (seconds).
    var audio: (file: String, offset: Double)? = nil
    /// The face scan of the session's face video; `offset`: the video's start on the report's clock; `interval`: between samples;
    /// `strongEmotion`: the probability from which an expression is strong.
    var face: (outcome: FaceScanner.Outcome, offset: Double, interval: Double, strongEmotion: Double)? = nil
    /// The page at each screenshot, by index, of a session that recorded its page (capture.js's `dom`).
    var pages: [Int: ShotPage] = [:]

    func result<R: InterpretationResult>(_ type: R.Type) -> R? { analysis.results.first(type) }

    func shotFile(_ index: Int?) -> String? { index.flatMap { shotFiles.indices.contains($0) ? shotFiles[$0] : nil } }

    func page(_ index: Int?) -> ShotPage? { index.flatMap { pages[$0] } }

    func screen(of index: Int?) -> Size? {
        guard let index, let shots = result(Screenshots.self)?.shots, shots.indices.contains(index) else { return nil }
        return shots[index].screen
    }

    /// Seconds since the session's start, as `m:ss.s`.
    func clock(_ time: Double) -> String { Format.clock(time - start) }
}

/// What every section sees: the sessions of the report, one or several to compare.
struct ReportContext {
    let sessions: [ReportedSession]
    let options: AnalysisOptions

    var isComparison: Bool { sessions.count > 1 }

    /// One column per session, side by side (the column is the whole width for a single session).
    func columns(_ body: (ReportedSession) -> String) -> String {
        let output = ReportOutput()
        // Kept in memory, the output never writes, so it never fails.
        try? columns(to: output) { try output.append(body($0)) }
        return output.text
    }

    /// `columns` for a section that writes its HTML piece by piece into `output` (one that grows with the session).
    func columns(to output: ReportOutput, _ body: (ReportedSession) throws -> Void) throws {
        guard isComparison else { return try body(sessions[0]) }
        try output.append("<div class=\"compare\">")
        for session in sessions {
            try output.append("<div class=\"column\"><h3 class=\"user\">\(esc(session.label))</h3>")
            try body(session)
            try output.append("</div>")
        }
        try output.append("</div>")
    }
}

enum Format {
    /// `m:ss.s` (`h:mm:ss.s` from an hour); "–" for a time that is no number.
    static func clock(_ seconds: Double) -> String {
        guard let tenths = Int(checked: (max(0, seconds) * 10).rounded()) else { return "–" }
        let (minutes, rest) = (tenths / 600, tenths % 600)
        let secondsText = String(format: "%02d.%d", rest / 10, rest % 10)
        return minutes >= 60 ? String(format: "%d:%02d:", minutes / 60, minutes % 60) + secondsText : "\(minutes):" + secondsText
    }

    static func duration(_ seconds: Double) -> String {
        seconds < 60 ? String(format: "%.1f s", seconds) : clock(seconds)
    }

    /// "one session", "3 sessions": a count with its noun in the right number.
    static func count(_ count: Int, _ noun: String) -> String {
        count == 1 ? "one \(noun)" : "\(count) \(noun)s"
    }

    static func percent(_ share: Double) -> String { String(format: "%.1f %%", share * 100) }

    static func date(_ seconds: Double?) -> String {
        guard let seconds = seconds?.finite else { return "–" }
        return DateText.readable(seconds)
    }
}

/// Text for HTML content and attribute values.
func esc(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for character in text {
        switch character {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        default: out.append(character)
        }
    }
    return out
}

/// What a section (or a session's column) shows in place of what it has none of.
func emptyNote(_ text: String) -> String {
    "<p class=\"empty\">\(text)</p>"
}

extension Collection {
    /// Nil when empty: `guard let rows = rows.nonEmpty else { return emptyNote(…) }`.
    var nonEmpty: Self? { isEmpty ? nil : self }
}

/// JSON text of a string, safe inside a `<script>` element.
func jsonString(_ text: String) -> String {
    JSONString.quoted(text, scriptSafe: true)
}

func jsonNumber(_ value: Double) -> String {
    guard value.isFinite else { return "0" }
    let text = PrintfNumber.thousandths(value)
    return text.hasSuffix(".000") ? String(text.dropLast(4)) : text
}

func jsonPoints(_ points: [Point]) -> String {
    "[" + points.map { "[\(jsonNumber($0.x)),\(jsonNumber($0.y))]" }.joined(separator: ",") + "]"
}

/// A screenshot with a mark where something happened: an element's frame, or a finger's spot; over `page`, the page
/// at that screenshot, instead of the image.
func markedScreenshot(_ session: ReportedSession, _ index: Int?, frame: Rect? = nil, point: Point? = nil,
                      caption: String = "", page: ShotPage? = nil) -> String {
    guard let index, let file = session.shotFile(index) else { return "" }
    return markedScreenshot(file: file, screen: session.screen(of: index), alt: "screenshot \(index + 1)", frame: frame,
                            point: point, caption: caption, page: page)
}

/// The width of a problem's screenshot, in CSS pixels (report.css's `figure.shot img`).
private let shotWidth = 120.0

/// A screenshot file (report-relative) with its marks; `screen` (points) places them, `caption` is HTML.
func markedScreenshot(file: String, screen: Size?, alt: String, frame: Rect? = nil, point: Point? = nil,
                      caption: String = "", page: ShotPage? = nil) -> String {
    var marks = ""
    if let screen, screen.width > 0, screen.height > 0 {
        func pct(_ value: Double, _ total: Double) -> String { String(format: "%.2f%%", value / total * 100) }
        if let frame {
            marks += "<span class=\"mark box\" style=\"left:\(pct(frame.x, screen.width));top:\(pct(frame.y, screen.height));width:\(pct(frame.width, screen.width));height:\(pct(frame.height, screen.height))\"></span>"
        }
        if let point {
            marks += "<span class=\"mark dot\" style=\"left:\(pct(point.x, screen.width));top:\(pct(point.y, screen.height))\"></span>"
        }
    }
    let captionHTML = caption.isEmpty ? "" : "<figcaption>\(caption)</figcaption>"
    if let page {
        let area = screen.flatMap { $0.width > 0 && $0.height > 0 ? $0 : nil } ?? page.viewport
        return "<figure class=\"shot\"><span class=\"marked page-under\" style=\"aspect-ratio:\(jsonNumber(area.width)) / \(jsonNumber(area.height))\">"
            + pageFrame(page, width: shotWidth, title: "the page at \(alt)") + "\(marks)</span>\(captionHTML)</figure>"
    }
    return "<figure class=\"shot\"><a href=\"\(file)\" target=\"_blank\"><span class=\"marked\"><img src=\"\(file)\" alt=\"\(esc(alt))\" loading=\"lazy\">\(marks)</span></a>\(caption.isEmpty ? "" : "<figcaption>\(caption)</figcaption>")</figure>"
}

/// The sides of a screen, in points, that a heatmap canvas takes.
private let canvasSide = 1.0...16_384

/// `screen` if its sides are ones a canvas or frame can take, else nil (NaN, 10³⁰⁰ points: missing).
func plausibleScreen(_ screen: Size?) -> Size? {
    screen.flatMap { canvasSide.contains($0.width) && canvasSide.contains($0.height) ? $0 : nil }
}

/// A canvas that report.js draws touches (spots) and gesture paths (lines) on, over the screenshot `file`
/// (none: on a blank screen), or, given the page at that screenshot, transparent over the page in its frame. The canvas
/// has the screen's size in points; `caption` is HTML.
func heatmapCanvas(file: String?, screen: Size?, touches: [Point], paths: [[Point]] = [], caption: String,
                   page: ShotPage? = nil) -> String {
    // A screen of no plausible size is missing: the page's window, else the iPhone's 320 × 480 points stand in.
    let screen = plausibleScreen(screen) ?? page?.viewport ?? Size(width: 320, height: 480)
    let canvas = """
        <canvas width="\(Int(saturating: screen.width))" height="\(Int(saturating: screen.height))" data-shot="\(page == nil ? file ?? "" : "")" \
        \(page == nil ? "" : "data-page=\"1\" ")data-touches="\(esc(jsonPoints(touches)))" \
        data-paths="\(esc("[" + paths.map(jsonPoints).joined(separator: ",") + "]"))" data-drawn="0"></canvas>
        """
    guard let page else { return "<figure class=\"heatmap\">\(canvas)<figcaption>\(caption)</figcaption></figure>" }
    return "<figure class=\"heatmap\"><div class=\"page-under\">" + pageFrame(page, width: heatmapWidth, title: "the page under the heatmap")
        + canvas + "</div><figcaption>\(caption)</figcaption></figure>"
}

/// The width of a heatmap, in CSS pixels (report.css's `figure.heatmap canvas`).
private let heatmapWidth = 240.0

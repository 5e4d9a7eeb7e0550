internal import Foundation
internal import SessionAnalysis

/// Every event, filterable by class and type and searchable, each linked to the screenshot of its moment.
/// The rows are JSON for report.js, which renders the ones that match: an hour has 100,000 of them, so they are
/// written as they are read from the journal, never held (the classes, known only then, come after the rows,
/// and report.js fills the class filter from them).
struct TimelineSection: SectionWriter {
    func write(_ context: ReportContext, to output: ReportOutput) throws {
        let users = context.sessions.map { jsonString($0.label) }.joined(separator: ",")
        // Per session, its voice's file and where time 0 is in it: a click on a row plays from there.
        let audio = context.sessions.map { $0.audio.map { "[\(jsonString($0.file)),\(jsonNumber($0.offset))]" } ?? "null" }
        let player = context.sessions.contains { $0.audio != nil }
            ? "<audio id=\"tl-audio\" controls preload=\"metadata\" aria-label=\"the tester's voice\"></audio>" : ""
        try output.append("""
            <div class="timeline" id="timeline-events" data-ready="0">
            <form class="filters">
            <label>Class <select id="tl-class"><option value="">all</option></select></label>
            <label>Type <select id="tl-type"><option value="">all</option></select></label>
            \(context.isComparison ? "<label>User <select id=\"tl-user\"><option value=\"\">all</option>\(context.sessions.map { "<option>\(esc($0.label))</option>" }.joined())</select></label>" : "")
            <label>Search <input id="tl-search" type="search" placeholder="view, element, text…"></label>
            <span id="tl-count"></span>
            </form>
            \(player)
            <div class="timeline-body"><div class="timeline-rows"><table><thead><tr>\(context.isComparison ? "<th>User</th>" : "")<th>Time</th><th>Class</th><th>Type</th><th>View</th><th>Details</th></tr></thead><tbody id="tl-rows"></tbody></table>
            <button id="tl-more" type="button" hidden>Show more</button></div>
            <figure class="timeline-shot"><img id="tl-shot" alt="the screen at the selected event" hidden><figcaption id="tl-shot-caption">Select an event to see the screen at its time.</figcaption></figure></div>
            <script type="application/json" id="timeline-data">{"users":[\(users)],"audio":[\(audio.joined(separator: ","))],"rows":[

            """)
        var classes: [String] = []
        var classIndex: [String: Int] = [:]
        var first = true
        func row(_ session: Int, _ time: Double, _ eventClass: String, _ type: String, _ view: String?, _ summary: String, _ shot: String?) throws {
            let number: Int
            if let known = classIndex[eventClass] {
                number = known
            } else {
                number = classes.count
                classes.append(eventClass)
                classIndex[eventClass] = number
            }
            try output.append((first ? "" : ",\n") + "[\(session),\(jsonNumber(time)),\(number),\(jsonString(type)),"
                + "\(jsonString(view ?? "")),\(jsonString(summary)),\(jsonString(shot ?? ""))]")
            first = false
        }
        for (sessionIndex, session) in context.sessions.enumerated() {
            // Findings among the events at their time: what the tester said (class "speech"), shakes (class "motion").
            var findings = Self.findings(session)[...]
            func findingsBefore(_ time: Double) throws {
                while let finding = findings.first, finding.time <= time {
                    try row(sessionIndex, finding.time - session.start, finding.eventClass, finding.type, finding.view, finding.summary,
                            session.shotFile(finding.screenshot))
                    findings.removeFirst()
                }
            }
            try session.result(Timeline.self)?.forEachEntry(screenshots: session.result(Screenshots.self)) { entry in
                try findingsBefore(entry.time)
                try row(sessionIndex, entry.time - session.start, entry.eventClass, entry.type, entry.view, entry.summary,
                        session.shotFile(entry.screenshot))
            }
            try findingsBefore(.infinity)
        }
        try output.append("],\"classes\":[\(classes.map(jsonString).joined(separator: ","))]}</script>\n</div>")
    }

    /// The analysis' own rows, in time order: quotes, and each shake with its figures.
    private struct Finding {
        var time: Double
        var eventClass: String
        var type: String
        var view: String?
        var summary: String
        var screenshot: Int?
    }

    private static func findings(_ session: ReportedSession) -> [Finding] {
        let quotes = (session.result(Speech.self)?.quotes ?? []).map { quote in
            Finding(time: quote.segment.start, eventClass: "speech", type: quote.segment.exclamation ?? "speech",
                          view: quote.view, summary: "\u{201C}\(quote.segment.text)\u{201D}", screenshot: quote.screenshot)
        }
        let screenshots = session.result(Screenshots.self)
        let shakes = (session.result(Shakes.self)?.shakes ?? []).map { shake in
            Finding(time: shake.start, eventClass: "motion", type: "shake", view: shake.view,
                          summary: "shaken for \(Format.duration(shake.end - shake.start)): \(shake.reversals) changes of direction, up to \(String(format: "%.1f", shake.peak)) g",
                          screenshot: screenshots?.shown(at: shake.start))
        }
        return (quotes + shakes).sorted { $0.time < $1.time }
    }
}

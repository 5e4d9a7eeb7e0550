internal import SessionAnalysis

/// Every event, filterable by class and type and searchable, each linked to the screenshot of its moment.
/// The rows are JSON for report.js, which renders the ones that match: an hour has 100,000 of them.
struct TimelineSection: ReportSection {
    let kind = SectionKind.timeline
    let title = "Timeline"

    func body(_ context: ReportContext) -> String {
        var classes: [String] = []
        var classIndex: [String: Int] = [:]
        var rows = ""
        for (sessionIndex, session) in context.sessions.enumerated() {
            for entry in session.result(Timeline.self)?.entries ?? [] {
                let index = classIndex[entry.eventClass] ?? {
                    classes.append(entry.eventClass)
                    classIndex[entry.eventClass] = classes.count - 1
                    return classes.count - 1
                }()
                if !rows.isEmpty { rows += ",\n" }
                rows += "[\(sessionIndex),\(jsonNumber(entry.time - session.start)),\(index),\(jsonString(entry.type)),"
                rows += "\(jsonString(entry.view ?? "")),\(jsonString(entry.summary)),\(jsonString(session.shotFile(entry.screenshot) ?? ""))]"
            }
        }
        let users = context.sessions.map { jsonString($0.label) }.joined(separator: ",")
        let data = "{\"users\":[\(users)],\"classes\":[\(classes.map(jsonString).joined(separator: ","))],\"rows\":[\n\(rows)]}"
        return """
            <div class="timeline" id="timeline-events" data-ready="0">
            <form class="filters">
            <label>Class <select id="tl-class"><option value="">all</option>\(classes.map { "<option>\(esc($0))</option>" }.joined())</select></label>
            <label>Type <select id="tl-type"><option value="">all</option></select></label>
            \(context.isComparison ? "<label>User <select id=\"tl-user\"><option value=\"\">all</option>\(context.sessions.map { "<option>\(esc($0.label))</option>" }.joined())</select></label>" : "")
            <label>Search <input id="tl-search" type="search" placeholder="view, element, text…"></label>
            <span id="tl-count"></span>
            </form>
            <div class="timeline-body"><div class="timeline-rows"><table><thead><tr>\(context.isComparison ? "<th>User</th>" : "")<th>Time</th><th>Class</th><th>Type</th><th>View</th><th>Details</th></tr></thead><tbody id="tl-rows"></tbody></table>
            <button id="tl-more" type="button" hidden>Show more</button></div>
            <figure class="timeline-shot"><img id="tl-shot" alt="the screen at the selected event" hidden><figcaption id="tl-shot-caption">Select an event to see the screen at its time.</figcaption></figure></div>
            <script type="application/json" id="timeline-data">\(data)</script>
            </div>
            """
    }
}

internal import StudyAnalysis
internal import WireProtocol

/// The observers' notes and quotes, grouped by the task being attempted when they were taken. Task begin
/// and end marks are left out (the participants section shows the attempts); verdicts stay.
struct StudyNotesSection: StudyReportSection {
    func body(_ context: StudyReportContext) -> String {
        guard let notes = context.results.notes.filter({ $0.note.taskMark != .begin && $0.note.taskMark != .end }).nonEmpty else {
            return emptyNote("No observer took a note in these sessions.")
        }
        let byTask = Dictionary(grouping: notes) { $0.task ?? "" }
        let groups = context.taskNames.filter { byTask[$0] != nil } + (byTask[""] == nil ? [] : [""])
        return groups.map { task in
            let heading = task.isEmpty ? "Outside any task" : esc(task)
            return "<h3>\(heading)</h3><ol class=\"notes\">" + byTask[task]!.sorted { ($0.iteration, $0.participant, $0.time) < ($1.iteration, $1.participant, $1.time) }.map { entry in
                let observer = entry.note.observer.map { " · \(esc($0))" } ?? ""
                return """
                    <li class="note" data-kind="\(esc(entry.note.kind))"><div><p class="where"><span class="badge">\(esc(entry.note.kind))</span> \
                    \(esc(entry.participant)) · iteration \(entry.iteration) · \(context.clock(entry.time, session: entry.session))\(observer) \
                    \(context.sessionLinks(entry.session, at: entry.time))</p>\
                    <p class="text">\(esc(entry.note.text))</p></div></li>
                    """
            }.joined() + "</ol>"
        }.joined()
    }
}

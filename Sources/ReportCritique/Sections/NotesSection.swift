internal import SessionAnalysis

/// The observers' notes (issue 15), in session time, each with its kind, observer and the screen of its moment.
struct NotesSection: ReportSection {
    func body(_ context: ReportContext) -> String {
        context.columns { session in
            guard let notes = session.result(ObserverNotes.self)?.notes.nonEmpty else {
                return emptyNote("No observer took a note in this session (<code>muevalctl note</code>, or the console while watching or replaying).")
            }
            return "<ol class=\"notes\">" + notes.map { entry in
                let observer = entry.note.observer.map { " · \(esc($0))" } ?? ""
                return """
                    <li class="note" data-kind="\(esc(entry.note.kind))">\(markedScreenshot(session, entry.screenshot))\
                    <div><p class="where"><span class="badge">\(esc(entry.note.kind))</span> \(session.clock(entry.time))\(observer)</p>\
                    <p class="text">\(esc(entry.note.text))</p></div></li>
                    """
            }.joined() + "</ol>"
        }
    }
}

/// The timeline's lines as the journal's one pass computes them, in a `ScratchFile` (issue 41): an hour's 100,000
/// lines (a day's millions) are never in memory, and no event is decoded a second time when the report writes them.
final class TimelineScratch: Sendable {
    private let file: ScratchFile

    init(directory: String) throws {
        file = try ScratchFile(directory: directory, purpose: "timeline")
    }

    func append(_ entry: TimelineEntry) throws {
        file.append(UInt64(bitPattern: entry.eventID))
        file.append(entry.time)
        try file.append(entry.eventClass)
        try file.append(entry.type)
        try file.append(entry.view)
        try file.append(entry.summary)
        try file.recordEnded()
    }

    /// Writes what is pending: after the last `append`, before the first read.
    func flush() throws {
        try file.flush()
    }

    /// Every line in the order appended; `screenshot` is left nil (the caller knows the screenshots).
    func forEach(_ body: (TimelineEntry) throws -> Void) throws {
        var cursor = file.cursor()
        while cursor.hasMore {
            let id = Int64(bitPattern: try cursor.integer(UInt64.self))
            let time = try cursor.double()
            let eventClass = try cursor.string()
            let type = try cursor.string()
            let view = try cursor.optionalString()
            try body(TimelineEntry(eventID: id, time: time, eventClass: eventClass, type: type, view: view,
                                   summary: try cursor.string(), screenshot: nil))
        }
    }
}

internal import MuEvalWire
internal import WireProtocol

/// One line of the event log.
public struct TimelineEntry: Equatable, Sendable {
    public var eventID: Int64
    public var time: Double
    public var eventClass: String
    /// `type`, or a sensor's name, or a custom event's name.
    public var type: String
    public var view: String?
    /// The rest of the payload in one short line.
    public var summary: String
    /// What the screen showed then (the event's own screenshot when it took one).
    public var screenshot: Int?
}

/// Every event of the session, for the report's filterable timeline: its lines are computed in the journal's one
/// pass and kept in a file (`TimelineScratch`), so that an hour's 100,000 lines (or a day's millions) are never all
/// in memory and the report writes them without decoding the events again.
public struct Timeline: InterpretationResult, Equatable {
    /// Nil for a session without events.
    let scratch: TimelineScratch?

    /// Each event's line, in storage order, with the screenshot shown at its time.
    public func forEachEntry(screenshots: Screenshots?, _ body: (TimelineEntry) throws -> Void) throws {
        try scratch?.forEach { entry in
            var entry = entry
            entry.screenshot = screenshots?.shown(at: entry.time)
            try body(entry)
        }
    }

    public static func == (lhs: Timeline, rhs: Timeline) -> Bool { lhs.scratch === rhs.scratch }
}

public struct TimelineInterpreter: JournalInterpreter {
    public let name = "Timeline"
    public let produces: [any InterpretationResult.Type] = [Timeline.self]

    public func makeReader(for journal: SessionJournal) -> any JournalReader {
        Reader(directory: journal.scratchDirectory)
    }

    final class Reader: JournalReader {
        let eventClasses: Set<String>? = nil
        private let directory: String
        private var scratch: TimelineScratch?

        init(directory: String) {
            self.directory = directory
        }

        func read(_ event: JournalEvent) throws {
            let scratch = try scratch ?? TimelineScratch(directory: directory)
            self.scratch = scratch
            // An observer's note: its kind is the type, its text the details.
            let note = event.eventClass == ObserverNote.eventClass ? ObserverNote(payload: event.payload) : nil
            try scratch.append(TimelineEntry(eventID: event.id, time: event.time, eventClass: event.eventClass,
                                           type: note?.kind ?? event.type ?? "", view: event.view,
                                           summary: note?.line(limit: TimelineInterpreter.summaryLimit)
                                               ?? TimelineInterpreter.summary(of: event.payload)))
        }

        func finish(into results: inout ResultStore) throws {
            try scratch?.flush()
            results.add(Timeline(scratch: scratch))
        }
    }

    /// Summaries longer than this are cut: the timeline is for scanning, the event itself is in the file.
    static let summaryLimit = 160
    /// Keys the timeline shows in their own columns, or that only repeat the row.
    static let shownElsewhere: Set<String> = ["class", "timestamp", "seq", "type", "view", "sensor"]

    /// `key=value` for each field not shown in a column, as the live tail writes values.
    static func summary(of payload: PlistValue) -> String {
        PayloadSummary.fields(payload, excluding: shownElsewhere, limit: summaryLimit)
    }
}

internal import Foundation
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

/// Every event of the session, for the report's filterable timeline: read from the journal when the report
/// writes it, entry by entry, so that an hour's 100,000 lines (or a day's millions) are never all in memory.
public struct Timeline: InterpretationResult, Equatable {
    /// What the screen showed at each moment.
    let screenshots: Screenshots

    /// Each event's line, in storage order.
    public func forEachEntry(in journal: SessionJournal, _ body: (TimelineEntry) throws -> Void) throws {
        try journal.forEachEvent { event in
            // An observer's note: its kind is the type, its text the details.
            let note = event.eventClass == ObserverNote.eventClass ? ObserverNote(payload: event.payload) : nil
            try body(TimelineEntry(eventID: event.id, time: event.time, eventClass: event.eventClass,
                                   type: note?.kind ?? event.type ?? "", view: event.view,
                                   summary: note?.line(limit: TimelineInterpreter.summaryLimit)
                                       ?? TimelineInterpreter.summary(of: event.payload),
                                   screenshot: screenshots.shown(at: event.time)))
        }
    }
}

public struct TimelineInterpreter: Interpreter {
    public let name = "Timeline"
    public let requires: [any InterpretationResult.Type] = [Screenshots.self]
    public let produces: [any InterpretationResult.Type] = [Timeline.self]

    /// Summaries longer than this are cut: the timeline is for scanning, the event itself is in the file.
    static let summaryLimit = 160
    /// Keys the timeline shows in their own columns, or that only repeat the row.
    static let shownElsewhere: Set<String> = ["class", "timestamp", "seq", "type", "view", "sensor"]

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        results.add(Timeline(screenshots: try results.required(Screenshots.self)))
    }

    /// `key=value` for each field not shown in a column, as the live tail writes values.
    static func summary(of payload: PlistValue) -> String {
        PayloadSummary.fields(payload, excluding: shownElsewhere, limit: summaryLimit)
    }
}

internal import JournalStorage
public import SessionModel

/// When the session started and ended, what it recorded, who and what recorded it (thesis 5.3, `OverviewInterpreter`).
public struct Overview: InterpretationResult, Equatable {
    public struct ClassCount: Equatable, Sendable {
        public var eventClass: String
        public var count: Int
    }

    public var sessionName: String
    public var testUser: String?
    public var notes: String?
    /// Timestamps of the first and last event (seconds since 1970); nil for an empty session.
    public var start: Double?
    public var end: Double?
    public var eventCount: Int
    /// Events left out of the analysis because their time is not plausible (docs/REPORTS.md, "Absurd numbers");
    /// not in `eventCount`.
    public var implausibleEvents: Int = 0
    /// Most frequent class first.
    public var eventsPerClass: [ClassCount]
    public var devices: [DeviceRecord]
    public var gaps: [SessionGap]

    public var duration: Double { (end ?? 0) - (start ?? 0) }
}

/// Counts events without decoding a payload: the one pass over every row stays cheap.
public struct OverviewInterpreter: Interpreter {
    public let name = "Overview"
    public let requires: [any InterpretationResult.Type] = []
    public let produces: [any InterpretationResult.Type] = [Overview.self]

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        var counts: [String: Int] = [:]
        var start: Double?, end: Double?
        var total = 0, implausible = 0
        try journal.forEachStoredEvent(implausible: { _ in implausible += 1 }) { event in
            counts[event.eventClass, default: 0] += 1
            total += 1
            start = min(start ?? event.timestamp, event.timestamp)
            end = max(end ?? event.timestamp, event.timestamp)
        }
        let perClass = counts.map { Overview.ClassCount(eventClass: $0.key, count: $0.value) }
            .sorted { ($0.count, $1.eventClass) > ($1.count, $0.eventClass) }
        results.add(Overview(sessionName: journal.session.name, testUser: journal.session.testUser, notes: journal.session.notes,
                             start: start, end: end, eventCount: total, implausibleEvents: implausible, eventsPerClass: perClass,
                             devices: journal.devices, gaps: journal.gaps))
    }
}

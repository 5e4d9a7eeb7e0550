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

/// Counts events without needing a payload: the tally of the journal's one pass.
public struct OverviewInterpreter: JournalInterpreter {
    public let name = "Overview"
    public let produces: [any InterpretationResult.Type] = [Overview.self]

    public func makeReader(for journal: SessionJournal) -> any JournalReader { Reader(journal: journal) }

    final class Reader: JournalReader {
        let eventClasses: Set<String>? = nil
        var readsPayloads: Bool { false }
        private let journal: SessionJournal
        private var counts: [String: Int] = [:]
        private var start: Double?, end: Double?
        private var total = 0, implausible = 0

        init(journal: SessionJournal) {
            self.journal = journal
        }

        func read(_ event: JournalEvent) {
            counts[event.eventClass, default: 0] += 1
            total += 1
            start = min(start ?? event.time, event.time)
            end = max(end ?? event.time, event.time)
        }

        func skip(implausible event: StoredEvent) {
            implausible += 1
        }

        func finish(into results: inout ResultStore) {
            let perClass = counts.map { Overview.ClassCount(eventClass: $0.key, count: $0.value) }
                .sorted { ($0.count, $1.eventClass) > ($1.count, $0.eventClass) }
            results.add(Overview(sessionName: journal.session.name, testUser: journal.session.testUser, notes: journal.session.notes,
                                 start: start, end: end, eventCount: total, implausibleEvents: implausible, eventsPerClass: perClass,
                                 devices: journal.devices, gaps: journal.gaps))
        }
    }
}

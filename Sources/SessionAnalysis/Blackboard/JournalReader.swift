public import SessionModel

/// Reads events in the journal's one ordered pass (issue 41): `SessionJournal.read(with:into:)` hands each reader
/// the events of its classes in storage order, every event read and decoded once for all readers, then lets each
/// put its result on the blackboard. What a reader keeps should grow with what it reports, not with the events.
/// A class, not a value: the pass holds several readers of different kinds and each one changes as it reads.
public protocol JournalReader: AnyObject {
    /// The classes it reads; nil: every class.
    var eventClasses: Set<String>? { get }
    /// False when it reads only an event's id, class and time: its classes' payloads are then decoded only
    /// when another reader needs them, and otherwise it sees an empty payload.
    var readsPayloads: Bool { get }
    func read(_ event: JournalEvent) throws
    /// An event of its classes left out because its time is not plausible (docs/REPORTS.md, "Absurd numbers").
    func skip(implausible event: StoredEvent)
    func finish(into results: inout ResultStore) throws
}

extension JournalReader {
    public var readsPayloads: Bool { true }
    public func skip(implausible event: StoredEvent) {}
}

/// An interpreter whose evidence is the journal itself: it contributes through a reader in the one pass, which the
/// controller makes before the first round. It requires nothing, so that every such interpreter reads in that pass.
public protocol JournalInterpreter: Interpreter {
    func makeReader(for journal: SessionJournal) -> any JournalReader
}

extension JournalInterpreter {
    public var requires: [any InterpretationResult.Type] { [] }

    /// Alone (a controller given only some interpreters, a test), it reads the journal in a pass of its own.
    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        try journal.read(with: [makeReader(for: journal)], into: &results)
    }
}

/// Which readers read a class, and whether its payloads are decoded: worked out once per class, not per event,
/// from what the readers said before the pass (a value: the thread that reads the file keeps a copy of its own).
struct JournalRoutes: Sendable {
    struct Reading: Sendable {
        var classes: Set<String>?
        var payloads: Bool
    }

    struct Route: Sendable {
        /// Indices into the readers.
        var readers: [Int]
        var decodes: Bool
    }

    /// A session has a handful of classes; this bounds the table should a file have more.
    static let limit = 256

    private let readings: [Reading]
    private var known: [String: Route] = [:]
    /// The classes to select, or empty when some reader reads every class.
    let classes: [String]

    init(_ readers: [any JournalReader]) {
        readings = readers.map { Reading(classes: $0.eventClasses, payloads: $0.readsPayloads) }
        var named: Set<String> = []
        var everything = false
        for reading in readings {
            if let classes = reading.classes { named.formUnion(classes) } else { everything = true }
        }
        classes = everything ? [] : named.sorted()
    }

    mutating func route(of eventClass: String) -> Route {
        if let route = known[eventClass] { return route }
        let readers = readings.indices.filter { readings[$0].classes?.contains(eventClass) ?? true }
        let route = Route(readers: readers, decodes: readers.contains { readings[$0].payloads })
        if known.count < Self.limit { known[eventClass] = route }
        return route
    }
}

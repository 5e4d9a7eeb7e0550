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

/// Which readers read a class, and whether its payloads are decoded: worked out once per class, not per event.
struct JournalRoutes {
    struct Route {
        var readers: [any JournalReader]
        var decodes: Bool
    }

    /// A session has a handful of classes; this bounds the table should a file have more.
    static let limit = 256

    private let all: [any JournalReader]
    private var known: [String: Route] = [:]
    /// The classes to select, or empty when some reader reads every class.
    let classes: [String]

    init(_ readers: [any JournalReader]) {
        all = readers
        var named: Set<String> = []
        var everything = false
        for reader in readers {
            if let classes = reader.eventClasses { named.formUnion(classes) } else { everything = true }
        }
        classes = everything ? [] : named.sorted()
    }

    mutating func readers(of eventClass: String) -> Route {
        if let route = known[eventClass] { return route }
        let readers = all.filter { $0.eventClasses?.contains(eventClass) ?? true }
        let route = Route(readers: readers, decodes: readers.contains(where: \.readsPayloads))
        if known.count < Self.limit { known[eventClass] = route }
        return route
    }
}

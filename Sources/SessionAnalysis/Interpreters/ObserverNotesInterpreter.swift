public import WireProtocol

/// A note an observer took while watching the session live or replaying it, with the screen of its moment.
public struct NoteEntry: Equatable, Sendable {
    public var eventID: Int64
    /// On the device's clock (docs/STORAGE.md: how muevald maps a note's time).
    public var time: Double
    public var note: ObserverNote
    /// What the screen showed then.
    public var screenshot: Int?
}

/// The observers' notes of the session (issue 15), in time order.
public struct ObserverNotes: InterpretationResult, Equatable {
    public var notes: [NoteEntry]
}

public struct ObserverNotesInterpreter: Interpreter {
    public let name = "Observer notes"
    public let requires: [any InterpretationResult.Type] = [Interactions.self, Screenshots.self]
    public let produces: [any InterpretationResult.Type] = [ObserverNotes.self]

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let screenshots = try results.required(Screenshots.self)
        var notes = try results.required(Interactions.self).notes
        for index in notes.indices { notes[index].screenshot = screenshots.shown(at: notes[index].time) }
        // Storage order is the order they were taken; a note made during replay belongs at its place in the session.
        notes.sort { ($0.time, $0.eventID) < ($1.time, $1.eventID) }
        results.add(ObserverNotes(notes: notes))
    }
}

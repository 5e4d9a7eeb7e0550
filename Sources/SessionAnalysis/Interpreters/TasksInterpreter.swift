internal import WireProtocol

/// One run of a task between its custom begin and end markers (the app's, or the tester's own).
public struct TaskRun: Equatable, Sendable {
    public var name: String
    public var start: Double
    /// The end marker, or the tester's give-up mark; nil when the session has neither: the task was
    /// abandoned without a word or the recording stopped.
    public var end: Double?
    /// Taps, gestures and text entries between the markers.
    public var interactions: Int
    /// Views that appeared during the task.
    public var viewChanges: Int
    /// The tester's own marks delimit it (`by` = `tester`), not the app's task events.
    public var byTester = false
    /// It ended with the tester's give-up mark: the tester said they gave up.
    public var gaveUp = false

    public var duration: Double? { end.map { $0 - start } }
}

/// Time on task and interactions per task (seed 003's tasks per participant), from `beginEvent`/`endEvent` markers
/// and the tester's own task marks.
public struct Tasks: InterpretationResult, Equatable {
    public var runs: [TaskRun]
}

public struct TasksInterpreter: Interpreter {
    public let name = "Tasks"
    public let requires: [any InterpretationResult.Type] = [Interactions.self]
    public let produces: [any InterpretationResult.Type] = [Tasks.self]

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let interactions = try results.required(Interactions.self)
        let inputTimes = (interactions.strokes.map(\.start) + interactions.textEntries).sorted()
        let viewTimes = interactions.appearances.map(\.time)
        var runs: [TaskRun] = []
        // The app's and the tester's marks of a task are runs of their own: one's end never closes the other's begin.
        var open: [Opener: Int] = [:]
        for marker in interactions.markers {
            let opener = Opener(name: marker.name, byTester: marker.byTester)
            switch marker.kind {
            case .begin:
                open[opener] = runs.count
                runs.append(TaskRun(name: marker.name, start: marker.time, end: nil, interactions: 0, viewChanges: 0,
                                    byTester: marker.byTester))
            case .end, .giveUp:
                guard let index = open.removeValue(forKey: opener) else { continue }
                runs[index].end = marker.time
                runs[index].gaveUp = marker.kind == .giveUp
            case nil:
                continue
            }
        }
        for index in runs.indices {
            // An end before the begin (clocks set back) holds nothing.
            guard let span = ClosedRange.checked(runs[index].start, runs[index].end ?? .infinity) else { continue }
            runs[index].interactions = inputTimes.count { span.contains($0) }
            runs[index].viewChanges = viewTimes.count { span.contains($0) }
        }
        results.add(Tasks(runs: runs))
    }
}

/// Whose open run of which task a mark continues.
private struct Opener: Hashable {
    var name: String
    var byTester: Bool
}

internal import WireProtocol

/// One run of a task between its custom begin and end markers.
public struct TaskRun: Equatable, Sendable {
    public var name: String
    public var start: Double
    /// Nil when the session has no end marker for it: the task was abandoned or the recording stopped.
    public var end: Double?
    /// Taps, gestures and text entries between the markers.
    public var interactions: Int
    /// Views that appeared during the task.
    public var viewChanges: Int

    public var duration: Double? { end.map { $0 - start } }
}

/// Time on task and interactions per task (seed 003's tasks per participant), from `beginEvent`/`endEvent` markers.
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
        var open: [String: Int] = [:]
        for marker in interactions.markers {
            switch marker.kind {
            case .begin:
                open[marker.name] = runs.count
                runs.append(TaskRun(name: marker.name, start: marker.time, end: nil, interactions: 0, viewChanges: 0))
            case .end:
                guard let index = open.removeValue(forKey: marker.name) else { continue }
                runs[index].end = marker.time
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

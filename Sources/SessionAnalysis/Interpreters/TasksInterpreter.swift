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
        // An end before the begin (clocks set back) holds nothing.
        let spans = runs.map { ClosedRange.checked($0.start, $0.end ?? .infinity) }
        var inputs = SpanCounter(spans.compactMap { $0 }), views = inputs
        try interactions.strokes.forEach { _, stroke in inputs.add(stroke.start) }
        interactions.textEntries.forEach { inputs.add($0) }
        interactions.appearances.forEach { views.add($0.time) }
        for (index, (inputs, views)) in zip(inputs.counts(in: spans), views.counts(in: spans)).enumerated() {
            runs[index].interactions = inputs
            runs[index].viewChanges = views
        }
        results.add(Tasks(runs: runs))
    }
}

/// How many of a stream of times fall in each of a few closed spans, counted as the times go by: it keeps a
/// count per bound of the spans, not the times (a session's touches, issue 41).
struct SpanCounter {
    /// The spans' bounds, sorted.
    private let bounds: [Double]
    /// At `i`: the times whose first bound above them (`below`), or at or above them (`atMost`), is `bounds[i]`.
    private var below: [Int]
    private var atMost: [Int]

    init(_ spans: [ClosedRange<Double>]) {
        bounds = Set(spans.flatMap { [$0.lowerBound, $0.upperBound] }).sorted()
        below = Array(repeating: 0, count: bounds.count + 1)
        atMost = below
    }

    mutating func add(_ time: Double) {
        below[bounds.partitioningIndex { $0 > time }] += 1
        atMost[bounds.partitioningIndex { $0 >= time }] += 1
    }

    /// The times in each span (of those the counter was made for); 0 for nil.
    func counts(in spans: [ClosedRange<Double>?]) -> [Int] {
        func running(_ counts: [Int]) -> [Int] {
            var sum = 0
            return counts.map { sum += $0; return sum }
        }
        let below = running(below), atMost = running(atMost)
        return spans.map { span in
            guard let span else { return 0 }
            // Times at or below the upper bound, less those below the lower one.
            return atMost[bounds.partitioningIndex { $0 >= span.upperBound }] - below[bounds.partitioningIndex { $0 >= span.lowerBound }]
        }
    }
}

/// Whose open run of which task a mark continues.
private struct Opener: Hashable {
    var name: String
    var byTester: Bool
}

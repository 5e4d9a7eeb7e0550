internal import SessionAnalysis
internal import WireProtocol

/// Who delimited a run of a task: the app's task events, the tester's own task marks (the capture
/// library's `beginTask`/`endTask`/`giveUpTask`), the observer's task marks.
public enum TaskMarkSource: String, Sendable, CaseIterable, Comparable, Codable {
    case app, tester, observer

    /// In the order of the cases: how `marked_by` lists them.
    public static func < (a: TaskMarkSource, b: TaskMarkSource) -> Bool {
        a.rank < b.rank
    }

    private var rank: Int {
        switch self {
        case .app: 0
        case .tester: 1
        case .observer: 2
        }
    }
}

/// One run of a study task in one session: from the earliest begin among the app's task events, the
/// tester's marks and the observer's marks that overlap, to the end that matches that begin (docs/STUDIES.md).
struct TaskSpan: Sendable, Equatable, Codable {
    var task: String
    var start: Double
    /// Nil when the run never ended.
    var end: Double?
    var markedBy: Set<TaskMarkSource> = []
    /// The tester gave the task up (their give-up mark ended their run).
    var gaveUp = false

    func contains(_ time: Double) -> Bool {
        time >= start && time <= (end ?? .infinity)
    }

    func overlaps(_ other: TaskSpan) -> Bool {
        start <= (other.end ?? .infinity) && other.start <= (end ?? .infinity)
    }
}

/// Joins the app's task runs, the tester's and the observer's task marks of one session into runs.
enum TaskSpans {
    /// The runs of the study's `tasks`, by start. Runs of the same task from different sources that
    /// overlap are one run: it starts at the earliest begin and ends at that begin's own end (the next
    /// source's end when it has none). A run of one source alone counts as it is.
    static func merge(appRuns: [TaskRun], notes: [NoteEntry], tasks: Set<String>) -> [TaskSpan] {
        let runs = appRuns.map { run -> (source: TaskMarkSource, span: TaskSpan) in
            let source: TaskMarkSource = run.byTester ? .tester : .app
            return (source, TaskSpan(task: run.name, start: run.start, end: run.end, markedBy: [source], gaveUp: run.gaveUp))
        } + observerRuns(notes).map { (source: TaskMarkSource.observer, span: $0) }
        var spans: [TaskSpan] = []
        // By begin: a span is its earliest run, joined by the overlapping runs of the other sources.
        for (source, run) in runs.filter({ tasks.contains($0.span.task) }).sorted(by: { ($0.span.start, $0.source) < ($1.span.start, $1.source) }) {
            guard let index = spans.firstIndex(where: { $0.task == run.task && !$0.markedBy.contains(source) && $0.overlaps(run) }) else {
                spans.append(run)
                continue
            }
            spans[index].end = spans[index].end ?? run.end
            spans[index].markedBy.insert(source)
            spans[index].gaveUp = spans[index].gaveUp || run.gaveUp
        }
        return spans.sorted { ($0.start, $0.task) < ($1.start, $1.task) }
    }

    /// task-begin opens a run of its task, task-end closes the open one (an end without a begin is ignored),
    /// as `TasksInterpreter` reads the app's markers.
    static func observerRuns(_ notes: [NoteEntry]) -> [TaskSpan] {
        var runs: [TaskSpan] = []
        var open: [String: Int] = [:]
        for entry in notes {
            guard let task = entry.note.task else { continue }
            switch entry.note.taskMark {
            case .begin:
                open[task] = runs.count
                runs.append(TaskSpan(task: task, start: entry.time, end: nil, markedBy: [.observer]))
            case .end:
                guard let index = open.removeValue(forKey: task) else { continue }
                runs[index].end = entry.time
            case .outcome, nil:
                continue
            }
        }
        return runs
    }

    /// The observer's latest verdict on `task` in the session, at any time.
    static func verdict(on task: String, in notes: [NoteEntry]) -> TaskOutcome? {
        notes.last { $0.note.taskMark == .outcome && $0.note.task == task }?.note.outcome
    }
}

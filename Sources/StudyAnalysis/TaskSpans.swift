internal import SessionAnalysis
internal import WireProtocol

/// One run of a study task in one session: from the app's begin marker or the observer's task-begin
/// mark, whichever is earlier, to the end that matches that begin (docs/STUDIES.md).
struct TaskSpan: Sendable, Equatable {
    var task: String
    var start: Double
    /// Nil when the run never ended.
    var end: Double?

    func contains(_ time: Double) -> Bool {
        time >= start && time <= (end ?? .infinity)
    }

    func overlaps(_ other: TaskSpan) -> Bool {
        start <= (other.end ?? .infinity) && other.start <= (end ?? .infinity)
    }
}

/// Joins the app's task runs and the observer's task marks of one session into runs.
enum TaskSpans {
    /// The runs of the study's `tasks`, by start. An app run and an observer run of the same task that
    /// overlap are one run: it starts at the earlier begin and ends at that begin's own end (the other
    /// source's end when it has none). A run of either source alone counts as it is.
    static func merge(appRuns: [TaskRun], notes: [NoteEntry], tasks: Set<String>) -> [TaskSpan] {
        let app = appRuns.filter { tasks.contains($0.name) }.map { TaskSpan(task: $0.name, start: $0.start, end: $0.end) }
        let observed = observerRuns(notes).filter { tasks.contains($0.task) }
        var unmatched = observed
        var spans: [TaskSpan] = []
        for run in app {
            guard let index = unmatched.firstIndex(where: { $0.task == run.task && $0.overlaps(run) }) else {
                spans.append(run)
                continue
            }
            let mark = unmatched.remove(at: index)
            let (first, other) = mark.start < run.start ? (mark, run) : (run, mark)
            spans.append(TaskSpan(task: run.task, start: first.start, end: first.end ?? other.end))
        }
        spans += unmatched
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
                runs.append(TaskSpan(task: task, start: entry.time, end: nil))
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

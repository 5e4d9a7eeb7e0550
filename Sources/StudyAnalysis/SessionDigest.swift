internal import SessionAnalysis
internal import SessionModel
internal import WireProtocol

/// One session's analysis reduced to what the study's results need, so that the blackboard of a
/// one-hour session is dropped as soon as its digest is made.
struct SessionDigest: Sendable {
    var session: AnalysedSession
    /// The first run of each study task in this session, by task name.
    var firstRuns: [String: RunMeasure]
    /// Runs per task in this session.
    var runCounts: [String: Int]
    /// Every run, by start: to place notes.
    var spans: [TaskSpan]
    var problems: [SessionProblem]
    var touches: [ViewTouches]
    /// Observer notes that are not task marks, in time order.
    var notes: [(time: Double, note: ObserverNote)]
    /// What the participant said while thinking aloud (the transcript), in time order.
    var quotes: [TranscriptSegment]

    /// Analyses the session file at `record.path` (one pass of the standard interpreters) and reduces it.
    init(_ record: SessionRecord, tasks: [StudyTask], options: AnalysisOptions) throws(StudyAnalysisError) {
        let analysis: AnalyzedSession
        do {
            analysis = try AnalyzedSession(path: record.path, options: options,
                                       interpreters: Interpreters.standard(options: options, timeline: false))
        } catch {
            throw .unreadableSession(id: record.id, path: record.path, reason: "\(error)")
        }
        try self.init(analysis, record: record, tasks: tasks, options: options)
    }

    /// Reduces an analysis at hand (the daemon's automatic report's, at the stop) to what the study's results need.
    init(_ analysis: AnalyzedSession, record: SessionRecord, tasks: [StudyTask], options: AnalysisOptions) throws(StudyAnalysisError) {
        let results = analysis.results
        let overview = results.first(Overview.self)
        session = try Self.placed(record, file: analysis.journal.session.assignment, start: overview?.start ?? 0,
                                  duration: overview?.duration ?? 0, events: Int64(overview?.eventCount ?? 0))

        // The standard interpreters always put it there.
        guard let interactions = results.first(Interactions.self) else {
            throw .unreadableSession(id: record.id, path: record.path, reason: "its analysis has no interactions")
        }
        let noteEntries = results.first(ObserverNotes.self)?.notes ?? []
        quotes = results.first(Speech.self)?.quotes.map(\.segment) ?? []
        let tasks = Dictionary(tasks.map { ($0.name, $0) }) { first, _ in first }
        spans = TaskSpans.merge(appRuns: results.first(Tasks.self)?.runs ?? [], notes: noteEntries, tasks: Set(tasks.keys))
        runCounts = [:]
        var first: [(span: TaskSpan, task: StudyTask, measured: TaskSpan)] = []
        for span in spans {
            runCounts[span.task, default: 0] += 1
            guard runCounts[span.task] == 1, let task = tasks[span.task] else { continue }
            // A run that never ended is measured until the next run begins: the participant moved on.
            first.append((span, task, RunMeasure.measured(span, until: spans.first { $0.start > span.start }?.start)))
        }
        let taps: [RunMeasure.Taps]
        do {
            taps = try RunMeasure.Taps.count(in: first.map(\.measured), results: results, options: options)
        } catch {
            throw .unreadableSession(id: record.id, path: record.path, reason: "\(error)")
        }
        firstRuns = [:]
        for (run, taps) in zip(first, taps) {
            firstRuns[run.span.task] = RunMeasure(run.span, of: run.task, measured: run.measured, taps: taps, interactions: interactions,
                                                  verdict: TaskSpans.verdict(on: run.span.task, in: noteEntries))
        }

        let screenshots = results.first(Screenshots.self)
        let reference = { (index: Int?) -> ScreenshotReference? in
            guard let index, let screenshots, screenshots.shots.indices.contains(index) else { return nil }
            let shot = screenshots.shots[index]
            return ScreenshotReference(sessionPath: record.path, sha256: shot.blob.sha256, screen: shot.screen,
                                       pageTime: screenshots.pageTime(of: index))
        }
        problems = analysis.problems.map { SessionProblem($0, screenshot: reference($0.screenshot)) }
        touches = ViewTouches.byView(results.first(TouchHeatmaps.self)?.heatmaps ?? [], screenshot: reference)
        notes = noteEntries.filter { $0.note.taskMark == nil }.map { ($0.time, $0.note) }
    }

    init(session: AnalysedSession, firstRuns: [String: RunMeasure], runCounts: [String: Int], spans: [TaskSpan],
         problems: [SessionProblem], touches: [ViewTouches], notes: [(time: Double, note: ObserverNote)], quotes: [TranscriptSegment]) {
        self.session = session
        self.firstRuns = firstRuns
        self.runCounts = runCounts
        self.spans = spans
        self.problems = problems
        self.touches = touches
        self.notes = notes
        self.quotes = quotes
    }

    /// The session as the study places it: the catalog's iteration and participant, else its file's.
    static func placed(_ record: SessionRecord, file: StudyAssignment?, start: Double, duration: Double,
                       events: Int64) throws(StudyAnalysisError) -> AnalysedSession {
        guard let iteration = record.iteration ?? file?.iteration, let participant = record.participant ?? file?.participant else {
            throw .unassignedSession(id: record.id, path: record.path)
        }
        return AnalysedSession(id: record.id, uuid: record.uuid, name: record.name, iteration: iteration, participant: participant,
                               path: record.path, start: start, duration: duration, events: events)
    }

    /// The task whose run (the latest begun) was going on at `time`.
    func task(at time: Double) -> String? {
        spans.last { $0.contains(time) }?.task
    }
}

/// A problem one session's detectors found, as the study groups it, with its screenshot as a reference into the file.
struct SessionProblem: Sendable, Equatable {
    var kind: UsabilityProblem.Kind
    var view: String?
    var element: String?
    var time: Double
    var occurrences: Int
    var frame: Rect?
    var point: Point?
    var evidence: String
    var recommendation: String
    var screenshot: ScreenshotReference?

    init(_ problem: UsabilityProblem, screenshot: ScreenshotReference?) {
        self.init(kind: problem.kind, view: problem.view, element: problem.element, time: problem.time, occurrences: problem.occurrences,
                  frame: problem.frame, point: problem.point, evidence: problem.evidence, recommendation: problem.recommendation,
                  screenshot: screenshot)
    }

    init(kind: UsabilityProblem.Kind, view: String?, element: String?, time: Double, occurrences: Int, frame: Rect?, point: Point?,
         evidence: String, recommendation: String, screenshot: ScreenshotReference?) {
        self.kind = kind
        self.view = view
        self.element = element
        self.time = time
        self.occurrences = occurrences
        self.frame = frame
        self.point = point
        self.evidence = evidence
        self.recommendation = recommendation
        self.screenshot = screenshot
    }
}

/// Where fingers went down on one view in one session, with a screenshot of the view.
struct ViewTouches: Sendable, Equatable {
    var view: String
    var screenshot: ScreenshotReference?
    var points: [Point]

    /// Joins the per-screenshot heatmaps of a view; the first screenshot of the view is the one to draw on.
    /// Touches on screenshots of no known view are left out: a study heatmap is per view.
    static func byView(_ heatmaps: [Heatmap], screenshot: (Int?) -> ScreenshotReference?) -> [ViewTouches] {
        var touches: [ViewTouches] = []
        var index: [String: Int] = [:]
        for heatmap in heatmaps {
            guard let view = heatmap.view else { continue }
            if let existing = index[view] {
                touches[existing].points += heatmap.touches
            } else {
                index[view] = touches.count
                touches.append(ViewTouches(view: view, screenshot: screenshot(heatmap.screenshot), points: heatmap.touches))
            }
        }
        return touches
    }
}

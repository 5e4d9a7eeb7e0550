public import SessionAnalysis
public import SessionModel
public import StudyMetrics
public import WireProtocol

/// Everything a study report and export show (docs/STUDIES.md): each participant's attempt at each
/// task, the numbers per task and iteration, iteration against iteration, and the problems seen
/// across participants. Made by `StudyAnalyzer` from a `StudyData` and its session files.
public struct StudyResults: Sendable {
    public var study: Study
    /// The iterations analysed, in order (one with `--iteration`).
    public var iterations: [IterationResult]
    /// The sessions analysed, in id order.
    public var sessions: [AnalysedSession]
    /// One per participant × task × iteration that has a session (see `TaskAttempt`).
    public var attempts: [TaskAttempt]
    /// Per task and iteration.
    public var taskMetrics: [TaskMetrics]
    /// Per task, each iteration against the one before.
    public var comparisons: [TaskComparison]
    /// Problems grouped across sessions, highest priority first.
    public var problems: [ProblemGroup]
    /// Touches per view, per iteration over all participants and per participant.
    public var heatmaps: [ViewHeatmap]
    /// Observer notes and quotes, each with the task it was taken during.
    public var notes: [StudyNote]
    public var responses: StudyResponses

    public init(study: Study, iterations: [IterationResult], sessions: [AnalysedSession], attempts: [TaskAttempt],
                taskMetrics: [TaskMetrics], comparisons: [TaskComparison], problems: [ProblemGroup], heatmaps: [ViewHeatmap],
                notes: [StudyNote], responses: StudyResponses) {
        self.study = study
        self.iterations = iterations
        self.sessions = sessions
        self.attempts = attempts
        self.taskMetrics = taskMetrics
        self.comparisons = comparisons
        self.problems = problems
        self.heatmaps = heatmaps
        self.notes = notes
        self.responses = responses
    }
}

/// A session of the study as analysed: who, when, and where its file is.
public struct AnalysedSession: Sendable, Equatable {
    public var id: Int64
    public var uuid: String
    public var name: String
    public var iteration: Int
    public var participant: String
    /// The session file (screenshots of heatmaps and problems are read from it).
    public var path: String
    /// Device time of its first event: offsets in the report count from here.
    public var start: Double
    public var duration: Double
    public var events: Int64

    public init(id: Int64, uuid: String, name: String, iteration: Int, participant: String, path: String, start: Double,
                duration: Double, events: Int64) {
        self.id = id
        self.uuid = uuid
        self.name = name
        self.iteration = iteration
        self.participant = participant
        self.path = path
        self.start = start
        self.duration = duration
        self.events = events
    }
}

/// An iteration's participants and its SUS.
public struct IterationResult: Sendable, Equatable {
    public var number: Int
    public var label: String?
    /// Codes of the participants with a session or answers in this iteration, sorted.
    public var participants: [String]
    /// SUS score per participant who answered.
    public var susScores: [String: Double]
    /// Mean SUS with its t-interval (clipped to 0…100).
    public var sus: Estimate?
    /// The Sauro–Lewis grade of the mean.
    public var grade: SUSGrade?
    /// Mean SUS against the iteration before (B − A, Welch).
    public var susChange: Difference?

    public init(number: Int, label: String?, participants: [String], susScores: [String: Double], sus: Estimate?,
                grade: SUSGrade?, susChange: Difference?) {
        self.number = number
        self.label = label
        self.participants = participants
        self.susScores = susScores
        self.sus = sus
        self.grade = grade
        self.susChange = susChange
    }
}

/// One participant's attempt at one task in one iteration: the first run of the task in their
/// session(s) of that iteration, from the app's task events or the observer's task marks.
/// A task never begun has no attempt.
public struct TaskAttempt: Sendable, Equatable {
    public var session: Int64
    public var iteration: Int
    public var participant: String
    public var task: String
    /// Device time.
    public var start: Double
    /// Nil when the task never ended.
    public var end: Double?
    public var duration: Double? { end.map { $0 - start } }
    /// After the observer's verdict, when there is one.
    public var outcome: TaskOutcome
    /// From the task's success criterion, end and time limit.
    public var derivedOutcome: TaskOutcome
    /// The observer's verdict replaced the derived outcome.
    public var overridden: Bool
    /// Why: "custom event PostPublished", "no end", "gave up", "over the 60 s limit", "observer: assisted"…
    public var reason: String
    /// The participant's Single Ease Question answer for the task.
    public var seq: Int?
    /// Taps on nothing interactive.
    public var misclicks: Int
    /// Taps after which nothing happened (the unresponsive-tap detector).
    public var unresponsiveTaps: Int
    /// Views that appeared during the attempt, in order.
    public var views: [String]
    /// Views beyond the task's expected path (nil without one).
    public var extraViews: Int?
    /// Going back: pop and dismiss transitions.
    public var backtracks: Int
    /// Ids of the `ProblemGroup`s hit during the attempt.
    public var problems: [String]
    /// How many runs of this task the iteration's sessions hold (the first is this attempt).
    public var runs: Int
    /// What the participant said during the attempt (think-aloud), exclamations marked.
    public var quotes: [TranscriptSegment] = []
    /// Whose marks delimit the attempt: the app's task events, the tester's own marks, the observer's; in that order.
    public var markedBy: [TaskMarkSource] = []

    public init(session: Int64, iteration: Int, participant: String, task: String, start: Double, end: Double?,
                outcome: TaskOutcome, derivedOutcome: TaskOutcome, overridden: Bool, reason: String, seq: Int?,
                misclicks: Int, unresponsiveTaps: Int, views: [String], extraViews: Int?, backtracks: Int,
                problems: [String], runs: Int) {
        self.session = session
        self.iteration = iteration
        self.participant = participant
        self.task = task
        self.start = start
        self.end = end
        self.outcome = outcome
        self.derivedOutcome = derivedOutcome
        self.overridden = overridden
        self.reason = reason
        self.seq = seq
        self.misclicks = misclicks
        self.unresponsiveTaps = unresponsiveTaps
        self.views = views
        self.extraViews = extraViews
        self.backtracks = backtracks
        self.problems = problems
        self.runs = runs
    }
}

/// The numbers of one task in one iteration.
public struct TaskMetrics: Sendable, Equatable {
    public var task: String
    public var iteration: Int
    public var attempts: Int
    public var successes: Int
    /// Successes / attempts with the adjusted-Wald interval.
    public var completion: Estimate?
    /// Geometric mean time of successful attempts with its interval.
    public var time: Estimate?
    /// Mean Single Ease Question answer with its interval (1…7).
    public var seq: Estimate?
    /// Means per attempt.
    public var misclicks: Double
    public var unresponsiveTaps: Double
    public var extraViews: Double?
    public var backtracks: Double
    /// Distinct problem groups hit during the task's attempts.
    public var problemsHit: Int

    public init(task: String, iteration: Int, attempts: Int, successes: Int, completion: Estimate?, time: Estimate?,
                seq: Estimate?, misclicks: Double, unresponsiveTaps: Double, extraViews: Double?, backtracks: Double,
                problemsHit: Int) {
        self.task = task
        self.iteration = iteration
        self.attempts = attempts
        self.successes = successes
        self.completion = completion
        self.time = time
        self.seq = seq
        self.misclicks = misclicks
        self.unresponsiveTaps = unresponsiveTaps
        self.extraViews = extraViews
        self.backtracks = backtracks
        self.problemsHit = problemsHit
    }
}

/// Did the redesign help? One task, iteration `to` against iteration `from`.
public struct TaskComparison: Sendable, Equatable {
    public var task: String
    public var from: Int
    public var to: Int
    /// Completion rate difference (to − from).
    public var completion: Difference?
    /// Time-on-task ratio (to / from) of successful attempts.
    public var time: Difference?
    /// SEQ difference (to − from).
    public var seq: Difference?

    public init(task: String, from: Int, to: Int, completion: Difference?, time: Difference?, seq: Difference?) {
        self.task = task
        self.from = from
        self.to = to
        self.completion = completion
        self.time = time
        self.seq = seq
    }
}

/// One usability problem as several participants met it: the same kind, view and element, within an iteration.
public struct ProblemGroup: Sendable, Equatable {
    /// Stable within the results: `i2-unresponsive-tap-PostsViewController-leaf`.
    public var id: String
    public var iteration: Int
    public var kind: UsabilityProblem.Kind
    public var view: String?
    /// The element's label, when the detector names one.
    public var element: String?
    /// Codes of the participants who hit it, sorted.
    public var participants: [String]
    /// Share of the iteration's participants who hit it.
    public var frequency: Double
    /// 1 (cosmetic) … 4 (catastrophic), per problem kind (docs/STUDIES.md).
    public var severity: Int
    /// frequency × severity: the ranking.
    public var priority: Double
    public var occurrences: Int
    public var evidence: String
    public var recommendation: String
    /// Where each participant met it, for links into sessions and replays.
    public var sightings: [ProblemSighting]

    public init(id: String, iteration: Int, kind: UsabilityProblem.Kind, view: String?, element: String?, participants: [String],
                frequency: Double, severity: Int, priority: Double, occurrences: Int, evidence: String, recommendation: String,
                sightings: [ProblemSighting]) {
        self.id = id
        self.iteration = iteration
        self.kind = kind
        self.view = view
        self.element = element
        self.participants = participants
        self.frequency = frequency
        self.severity = severity
        self.priority = priority
        self.occurrences = occurrences
        self.evidence = evidence
        self.recommendation = recommendation
        self.sightings = sightings
    }
}

public struct ProblemSighting: Sendable, Equatable {
    public var session: Int64
    public var participant: String
    /// Device time.
    public var time: Double
    public var screenshot: ScreenshotReference?
    public var frame: Rect?
    public var point: Point?

    public init(session: Int64, participant: String, time: Double, screenshot: ScreenshotReference?, frame: Rect?, point: Point?) {
        self.session = session
        self.participant = participant
        self.time = time
        self.screenshot = screenshot
        self.frame = frame
        self.point = point
    }
}

/// A screenshot in a session file, read when the report is written.
public struct ScreenshotReference: Sendable, Hashable {
    public var sessionPath: String
    public var sha256: String
    /// The screen in points.
    public var screen: Size?
    /// When the page under it is taken, for a web session that recorded its page (`Screenshots.pageTime(of:)`).
    public var pageTime: Double?

    public init(sessionPath: String, sha256: String, screen: Size?, pageTime: Double? = nil) {
        self.sessionPath = sessionPath
        self.sha256 = sha256
        self.screen = screen
        self.pageTime = pageTime
    }
}

/// Touches on one view: of all the iteration's participants (`participant` nil) or of one.
public struct ViewHeatmap: Sendable, Equatable {
    public var iteration: Int
    public var view: String
    public var participant: String?
    /// A screenshot of the view to draw the touches on.
    public var screenshot: ScreenshotReference?
    public var points: [Point]

    public init(iteration: Int, view: String, participant: String?, screenshot: ScreenshotReference?, points: [Point]) {
        self.iteration = iteration
        self.view = view
        self.participant = participant
        self.screenshot = screenshot
        self.points = points
    }
}

/// An observer's note or quote, placed in the task it was taken during.
public struct StudyNote: Sendable, Equatable {
    public var session: Int64
    public var iteration: Int
    public var participant: String
    /// The task being attempted at the time, if any.
    public var task: String?
    /// Device time.
    public var time: Double
    public var note: ObserverNote

    public init(session: Int64, iteration: Int, participant: String, task: String?, time: Double, note: ObserverNote) {
        self.session = session
        self.iteration = iteration
        self.participant = participant
        self.task = task
        self.time = time
        self.note = note
    }
}

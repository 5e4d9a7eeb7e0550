/// The interpreters of an analysis: the one place where an interpreter is registered.
/// Order does not matter; the controller runs each when its requirements are on the blackboard.
/// A change to what any of them finds adds one to `AnalysisVersion.current` (stored digests are made again).
public enum Interpreters {
    /// `timeline` false when nothing will write the timeline (a study's digest): its lines then cost nothing.
    public static func standard(options: AnalysisOptions, timeline: Bool = true) -> [any Interpreter] {
        let all: [any Interpreter] = [
            OverviewInterpreter(),
            InteractionsInterpreter(options: options),
            ScreenshotsInterpreter(),
            TimelineInterpreter(),
            ObserverNotesInterpreter(),
            TouchHeatmapInterpreter(),
            GesturePathsInterpreter(),
            ViewChangesInterpreter(),
            ViewDurationInterpreter(options: options),
            InputModalitiesInterpreter(),
            TasksInterpreter(),
            UIGuidelineChecker(options: options),
            InputResponsesInterpreter(),
            FreezeDetector(options: options),
            UnresponsiveTapDetector(options: options),
            RageTapDetector(options: options),
            NavigationLoopDetector(options: options),
            SpeechInterpreter(),
            SensorReadingsInterpreter(),
            ShakeDetector(options: options),
            FluidityInterpreter(options: options),
        ]
        return timeline ? all : all.filter { !($0 is TimelineInterpreter) }
    }
}

/// The analysis of one session: its journal and the blackboard after every interpreter contributed.
public struct AnalyzedSession {
    public let journal: SessionJournal
    public let results: ResultStore
    /// Interpreters whose requirements never appeared (none with the standard set).
    public let neverReady: [String]

    /// Analyses the session file at `path` (thesis 4.2.2: the `AnalysisFacade`).
    public init(path: String, options: AnalysisOptions = AnalysisOptions(),
                interpreters: [any Interpreter]? = nil) throws {
        journal = try SessionJournal(path: path)
        (results, neverReady) = try InterpreterController(interpreters ?? Interpreters.standard(options: options)).run(on: journal)
        problems = Problems(results.all(ProblemReport.self).map(\.problems))
    }

    /// Every problem every detector found, in time order.
    public let problems: Problems
}

/// Every problem of every detector, in time order (at equal times, in the detectors' order): an order over the
/// detectors' own lists (16 bytes a problem), not a sorted copy of them (a long session has tens of thousands of
/// problems; the copy, made anew by each section that read it, was the largest part of the report's peak:
/// heaptrack, issue 41).
public struct Problems: RandomAccessCollection, Sendable {
    private let lists: [[UsabilityProblem]]
    private let order: [(list: Int, index: Int)]

    init(_ lists: [[UsabilityProblem]]) {
        self.lists = lists
        order = lists.enumerated().flatMap { list, problems in problems.indices.map { (list, $0) } }
            .sorted { (lists[$0.list][$0.index].time, $0.list, $0.index) < (lists[$1.list][$1.index].time, $1.list, $1.index) }
    }

    public var startIndex: Int { order.startIndex }
    public var endIndex: Int { order.endIndex }

    public subscript(position: Int) -> UsabilityProblem {
        lists[order[position].list][order[position].index]
    }
}

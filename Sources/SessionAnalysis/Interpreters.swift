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
    }

    /// Every problem every detector found, in time order.
    public var problems: [UsabilityProblem] {
        results.all(ProblemReport.self).flatMap(\.problems).sorted { $0.time < $1.time }
    }
}

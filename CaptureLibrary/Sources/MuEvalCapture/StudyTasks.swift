public import MuEvalWire

/// What the server's `<welcome>` says of the study the session belongs to: its tasks, in the order the
/// tester does them, and where the tester answers its questionnaire (`CaptureManager.studyTasks`).
public struct StudyTasks: Sendable, Equatable {
    /// In the order the tester does them; empty: the session has none (not a study's, or a server from
    /// before tasks were sent).
    public var tasks: [WelcomeTask]
    /// The questionnaire's page (SUS, SEQ) for the phone's browser, at the end; nil when the server gave none.
    public var questionnaire: String?

    public init(tasks: [WelcomeTask], questionnaire: String? = nil) {
        self.tasks = tasks
        self.questionnaire = questionnaire
    }

    /// The welcome's tasks by their `order` (the server sends them so; an app should not depend on it).
    init(_ welcome: Welcome) {
        self.init(tasks: welcome.tasks.enumerated().sorted { ($0.element.order, $0.offset) < ($1.element.order, $1.offset) }.map(\.element),
                  questionnaire: welcome.questionnaire)
    }

    public func task(named name: String) -> WelcomeTask? {
        tasks.first { $0.name == name }
    }
}

extension CaptureEvent {
    /// The tester's own marks on a task: they begin it, end it (they think they are done), or give it up.
    public enum TaskMark: String, Sendable { case begin, end, giveUp }

    /// The tester's task mark (CustomEvent `name` = task, `marker`, `by` = `tester`): the analysis delimits the
    /// attempt by it as by the app's task events, and a give-up makes it abandoned ("gave up").
    public static func taskMark(_ mark: TaskMark, _ task: String) -> CaptureEvent {
        CaptureEvent(.custom, ["name": .string(task), "marker": .string(mark.rawValue), "by": .string("tester")])
    }
}

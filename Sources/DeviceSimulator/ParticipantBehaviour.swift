/// How one participant of a usability study departs from the scenario's tester, who does every task as written:
/// tasks failed or abandoned, detours, misclicks, a slower or quicker pace. Several `muevalsim` runs with different
/// behaviours (and seeds) give a study participants whose numbers differ; every choice comes from the run's seed.
/// The default, `ideal`, plays the scenario as written; the options draw from a random stream of their own, so at their
/// defaults they change no event.
public struct ParticipantBehaviour: Sendable, Equatable {
    /// How a task goes for this participant.
    public enum Outcome: Sendable, Equatable {
        /// Every step, then the end marker.
        case completed
        /// About the first half of the steps, some wandering, then the end marker without the remaining steps: a
        /// success event or target view at the task's end is not reached.
        case failed
        /// Like `failed`, but the participant gives up: the app never sends the task's end marker.
        case abandoned
    }

    /// Tasks, by name, that the participant tries and fails (`--fail-task`).
    public var failedTasks: Set<String> = []
    /// Tasks, by name, that the participant gives up on (`--abandon-task`).
    public var abandonedTasks: Set<String> = []
    /// Per step, the probability (0…1) of a detour first: a view the task does not need is pushed or presented,
    /// looked at (sometimes with a tap beside the controls) and left again with a pop or dismiss (`--wander`).
    public var wander = 0.0
    /// Per tap, the probability (0…1) of a tap where no control is, just before it (`--misclick-rate`).
    public var misclickRate = 0.0
    /// Multiplies the think time before each step (`--think-scale`): 2 is a participant who takes twice as long.
    public var thinkScale = 1.0
    /// The participant thinks aloud (`--think-aloud`): the scenario's `say` steps are said, and a failed or
    /// abandoned task gets an exclamation. Off, `say` steps take no time and nothing is said.
    public var thinksAloud = false
    /// The participant shakes the phone when a task fails or is abandoned (`--shake`): a burst of accelerometer
    /// samples, a possible sign of frustration for the analysis.
    public var shakes = false
    /// The participant's phone runs the capture library's frame-timing sensor (`--frame-timing`): readings per view,
    /// some views janky (chosen by the seed).
    public var frameTiming = false

    /// What a participant says when a task goes wrong, in turn.
    static let exclamations = ["oh no, what happened", "I can't find it", "where is the button", "why did it do that"]

    public init() {}

    /// The scenario's tester: every task as written.
    public static let ideal = ParticipantBehaviour()

    public func outcome(of task: String) -> Outcome {
        if abandonedTasks.contains(task) { return .abandoned }
        return failedTasks.contains(task) ? .failed : .completed
    }

    /// Refuses values out of range and task names the scenario does not have, before anything is played.
    public func validate(for scenario: Scenario) throws(BehaviourError) {
        for (option, value) in [("--wander", wander), ("--misclick-rate", misclickRate)] where !(0...1).contains(value) {
            throw .notAProbability(option: option, value: value)
        }
        guard thinkScale > 0, thinkScale.isFinite else { throw .thinkScale(thinkScale) }
        let tasks = scenario.tasks.map(\.name)
        for (option, names) in [("--fail-task", failedTasks), ("--abandon-task", abandonedTasks)] {
            if let unknown = names.sorted().first(where: { !tasks.contains($0) }) {
                throw .unknownTask(option: option, name: unknown, scenario: scenario.name, tasks: tasks)
            }
        }
        if let both = failedTasks.intersection(abandonedTasks).sorted().first { throw .failedAndAbandoned(both) }
    }
}

/// Why a participant's behaviour cannot be played; each message names the option and what is valid.
public enum BehaviourError: Error, CustomStringConvertible, Equatable {
    case notAProbability(option: String, value: Double)
    case thinkScale(Double)
    case unknownTask(option: String, name: String, scenario: String, tasks: [String])
    case failedAndAbandoned(String)

    public var description: String {
        switch self {
        case .notAProbability(let option, let value):
            "\(option) is a probability from 0 to 1, not \(value)"
        case .thinkScale(let value):
            "--think-scale must be positive, not \(value)"
        case .unknownTask(let option, let name, let scenario, let tasks):
            "\(option): scenario \"\(scenario)\" has no task \"\(name)\"; its tasks: \(tasks.map { "\"\($0)\"" }.joined(separator: ", "))"
        case .failedAndAbandoned(let name):
            "task \"\(name)\" is given to both --fail-task and --abandon-task; a participant either fails it or abandons it"
        }
    }
}

/// A task the server gave the simulated tester (`--invitation`), and how they do it: as the scenario plays
/// it and `--fail-task`/`--abandon-task` say, or, when the scenario has no task of that name, given up at once.
public struct AssignedTask: Codable, Sendable, Equatable {
    public enum Course: String, Codable, Sendable {
        case completed, failed, gaveUp
        /// The scenario cannot play it: the tester begins it and gives it up.
        case notInScenario
    }

    public var name: String
    public var course: Course

    public init(name: String, course: Course) {
        self.name = name
        self.course = course
    }

    /// The server's `tasks` in its order, each matched by name with the scenario's.
    public static func plan(_ tasks: [String], scenario: Scenario, behaviour: ParticipantBehaviour) -> [AssignedTask] {
        tasks.map { name in
            guard scenario.tasks.contains(where: { $0.name == name }) else { return AssignedTask(name: name, course: .notInScenario) }
            return switch behaviour.outcome(of: name) {
            case .completed: AssignedTask(name: name, course: .completed)
            case .failed: AssignedTask(name: name, course: .failed)
            case .abandoned: AssignedTask(name: name, course: .gaveUp)
            }
        }
    }

    /// One line of the summary.
    func line(scenario: String) -> String {
        switch course {
        case .completed: "\"\(name)\": completed"
        case .failed: "\"\(name)\": failed (--fail-task)"
        case .gaveUp: "\"\(name)\": given up (--abandon-task)"
        case .notInScenario: "\"\(name)\": given up: scenario \"\(scenario)\" has no task of that name to play"
        }
    }
}

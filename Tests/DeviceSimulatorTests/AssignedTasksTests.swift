@testable import DeviceSimulator
import MuEvalWire
import OrderedCollections
import Testing
import WireProtocol

/// A participant invited to a study (`muevalsim --invitation`) plays the tasks the server sends, in its order, with
/// their own task marks: what one pass sends, read back through the daemon's decoder.
@Suite struct AssignedTasksTests {
    typealias Event = OrderedDictionary<String, PlistValue>

    /// One pass of `scenario` with the server's `tasks`, as the simulated phone plays them after the welcome.
    static func pass(_ tasks: [String], scenario name: String = "wordpress", behaviour: ParticipantBehaviour = .ideal,
                     seed: UInt64 = 42) throws -> (plan: [AssignedTask], events: [Event]) {
        var options = try ScenarioPlaybackTests.options(name, seed: seed)
        options.behaviour = behaviour
        let plan = AssignedTask.plan(tasks, scenario: options.scenario, behaviour: behaviour)
        var stream = EventStream(options, device: 0)
        stream.assign(plan)
        var bytes = stream.nextEncoded().bytes
        while !stream.passFinished { bytes += stream.nextEncoded().bytes }
        return (plan, try ScenarioPlaybackTests.decode(bytes))
    }

    /// "marker name by" of each task mark.
    static func marks(_ events: [Event]) -> [String] {
        events.filter { $0["marker"] != nil }.map { event in
            ["marker", "name", "by"].map { ScenarioPlaybackTests.string(event[$0]) }.joined(separator: " ")
        }
    }

    @Test func theServersTasksArePlayedInItsOrderWithTheTestersOwnMarks() throws {
        let scenario = try #require(BuiltinScenarios.named("wordpress"))
        // Publishing first: the tester goes where that task starts, then back for the others.
        let (plan, events) = try Self.pass(["Publish blog posting", "Open the blog", "Edit blog posting"])
        #expect(plan.map(\.course) == [.completed, .completed, .completed])
        #expect(Self.marks(events) == [
            "begin Publish blog posting tester", "end Publish blog posting tester",
            "begin Open the blog tester", "end Open the blog tester",
            "begin Edit blog posting tester", "end Edit blog posting tester",
        ])
        #expect(!events.contains { $0["call"] != nil }, "no app task events: the tester marks the tasks")
        #expect(ParticipantBehaviourTests.appEvents(events) == ["PostPublished", "BlogOpened", "User selects category “Work”", "PostDrafted"])
        ParticipantBehaviourTests.expectConsistentStacks(events, scenario)
    }

    @Test func aTaskTheScenarioCannotPlayIsGivenUpAndTheOthersStillGoAsTheFlagsSay() throws {
        let behaviour = ParticipantBehaviourTests.behaviour {
            $0.abandonedTasks = ["Edit blog posting"]
            $0.failedTasks = ["Publish blog posting"]
        }
        let (plan, events) = try Self.pass(["Open the blog", "Rate the app", "Edit blog posting", "Publish blog posting"],
                                           behaviour: behaviour)
        #expect(plan == [
            AssignedTask(name: "Open the blog", course: .completed), AssignedTask(name: "Rate the app", course: .notInScenario),
            AssignedTask(name: "Edit blog posting", course: .gaveUp), AssignedTask(name: "Publish blog posting", course: .failed),
        ])
        // Abandoning is the tester's give-up now; failing ends the task without reaching its goal.
        #expect(Self.marks(events) == [
            "begin Open the blog tester", "end Open the blog tester",
            "begin Rate the app tester", "giveUp Rate the app tester",
            "begin Edit blog posting tester", "giveUp Edit blog posting tester",
            "begin Publish blog posting tester", "end Publish blog posting tester",
        ])
        #expect(!ParticipantBehaviourTests.appEvents(events).contains("PostPublished"))
        ParticipantBehaviourTests.expectConsistentStacks(events, try #require(BuiltinScenarios.named("wordpress")))
    }

    @Test func theSummarySaysHowEachTaskWentAndWhyAnInvitationGotNone() throws {
        var device = DeviceReport(deviceId: "phone", deviceName: "iPhone")
        device.tasks = [AssignedTask(name: "Write a note", course: .completed), AssignedTask(name: "Share a note", course: .notInScenario)]
        device.questionnaire = "https://lab.example/i/abcdefghjk"
        var report = SimulationReport(server: "127.0.0.1:1", scenario: "plainnote", seed: 1, seconds: 1, devices: [device])
        #expect(report.text.contains("""
              tasks from the server, in its order:
                1. "Write a note": completed
                2. "Share a note": given up: scenario "plainnote" has no task of that name to play
              questionnaire: https://lab.example/i/abcdefghjk
            """))
        #expect(report.total.isComplete)
        report.devices[0].invitationProblem = "the server refused the invitation: no such invitation"
        #expect(!report.total.isComplete, "a refused invitation fails the run")
        #expect(report.text.contains("  invitation: the server refused the invitation: no such invitation"))
    }
}

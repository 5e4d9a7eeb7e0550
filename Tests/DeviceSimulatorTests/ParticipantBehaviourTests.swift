import DeviceSimulator
import MuEvalWire
import OrderedCollections
import Testing
import WireProtocol

/// Participants who fail, abandon, wander, misclick or think slowly: what each option does to the events a pass
/// sends, read back through the daemon's decoder, and that the navigation stack stays consistent throughout.
@Suite struct ParticipantBehaviourTests {
    typealias Event = OrderedDictionary<String, PlistValue>

    static func pass(_ behaviour: ParticipantBehaviour, scenario: String = "wordpress", seed: UInt64 = 42) throws -> [Event] {
        try ScenarioPlaybackTests.decode(bytes(behaviour, scenario: scenario, seed: seed))
    }

    static func bytes(_ behaviour: ParticipantBehaviour, scenario: String = "wordpress", seed: UInt64 = 42) throws -> [UInt8] {
        var options = try ScenarioPlaybackTests.options(scenario, seed: seed)
        options.behaviour = behaviour
        try behaviour.validate(for: options.scenario)
        return Simulation.plannedEvents(options, device: 0).flatMap(\.bytes)
    }

    static func behaviour(_ change: (inout ParticipantBehaviour) -> Void) -> ParticipantBehaviour {
        var behaviour = ParticipantBehaviour()
        change(&behaviour)
        return behaviour
    }

    static func markers(_ events: [Event]) -> [String] {
        events.filter { $0["marker"] != nil }.map { ScenarioPlaybackTests.string($0["marker"]) + " " + ScenarioPlaybackTests.string($0["name"]) }
    }

    /// Custom events other than the task markers: what the app reports (`PostPublished`, …).
    static func appEvents(_ events: [Event]) -> [String] {
        events.filter { $0["class"] == .string("CustomEvent") && $0["marker"] == nil }.map { ScenarioPlaybackTests.string($0["name"]) }
    }

    static func appeared(_ events: [Event]) -> [Event] { events.filter { $0["type"] == .string("viewDidAppear") } }

    static func backtracks(_ events: [Event]) -> Int {
        appeared(events).filter { [.string("pop"), .string("dismiss")].contains($0["transition"]) }.count
    }

    /// The events from the task's begin marker to its end marker (or to the next task's begin when there is none).
    static func during(_ task: String, _ events: [Event]) -> ArraySlice<Event> {
        let begin = events.firstIndex { $0["marker"] == .string("begin") && $0["name"] == .string(task) }!
        let end = events[(begin + 1)...].firstIndex { $0["marker"] != nil } ?? events.endIndex
        return events[begin..<end]
    }

    static func time(_ event: Event) -> Double {
        if case .real(let time)? = event["timestamp"] { return time }
        Issue.record("timestamp is not a <real>: \(event)")
        return 0
    }

    /// Every view change follows from the one before: a push or modal adds the view, a pop or dismiss removes the top,
    /// and every view is one of the scenario's.
    static func expectConsistentStacks(_ events: [Event], _ scenario: Scenario, sourceLocation: SourceLocation = #_sourceLocation) {
        var stack: [PlistValue] = []
        for event in appeared(events) {
            guard case .array(let now)? = event["viewStack"] else {
                Issue.record("no viewStack: \(event)", sourceLocation: sourceLocation)
                return
            }
            let view = event["view"]!
            #expect(now.last == view, sourceLocation: sourceLocation)
            #expect(scenario.view(named: ScenarioPlaybackTests.string(view)) != nil, sourceLocation: sourceLocation)
            switch ScenarioPlaybackTests.string(event["transition"]) {
            case "launch": #expect(now == [.string(scenario.initialView)], sourceLocation: sourceLocation)
            case "push", "modal": #expect(now == stack + [view], "\(stack) → \(now)", sourceLocation: sourceLocation)
            case "pop", "dismiss": #expect(now == Array(stack.dropLast()), "\(stack) → \(now)", sourceLocation: sourceLocation)
            case let other: Issue.record("transition \(other)", sourceLocation: sourceLocation)
            }
            stack = now
        }
    }

    @Test func theBuiltinTasksEndWithTheAppsSuccessEvent() throws {
        for name in BuiltinScenarios.names {
            let scenario = try #require(BuiltinScenarios.named(name))
            for task in scenario.tasks {
                #expect(task.steps.last?.do == .custom, "\(name): \(task.name)")
            }
        }
        #expect(Self.appEvents(try Self.pass(.ideal)) == ["BlogOpened", "User selects category “Work”", "PostDrafted", "PostPublished"])
    }

    @Test func aFailedTaskEndsWithoutItsLastSteps() throws {
        let scenario = try #require(BuiltinScenarios.named("wordpress"))
        let ideal = try Self.pass(.ideal)
        let failed = try Self.pass(Self.behaviour { $0.failedTasks = ["Publish blog posting"] })
        #expect(Self.markers(failed) == Self.markers(ideal), "every task still begins and ends")
        #expect(Self.appEvents(failed) == ["BlogOpened", "User selects category “Work”", "PostDrafted"])
        // The task's target view (the blog list, after its last step) is not reached while it runs…
        let task = Self.during("Publish blog posting", failed)
        #expect(!Self.appeared(Array(task)).contains { $0["view"] == .string("BlogsViewController") })
        #expect(!task.contains { $0["type"] == .string("action") && $0["action"] == .string("popViewControllerAnimated:") })
        // …but the app is back there afterwards, before it terminates.
        let after = Self.appeared(Array(failed[task.endIndex...]))
        #expect(after.last?["viewStack"] == .array([.string("BlogsViewController")]))
        Self.expectConsistentStacks(failed, scenario)

        // A failed middle task: the next one starts where it would have, and succeeds.
        let middle = try Self.pass(Self.behaviour { $0.failedTasks = ["Edit blog posting"] })
        #expect(Self.markers(middle) == Self.markers(ideal))
        #expect(Self.appEvents(middle) == ["BlogOpened", "User selects category “Work”", "PostPublished"], "its first half only")
        #expect(Self.during("Edit blog posting", middle).count < Self.during("Edit blog posting", ideal).count)
        Self.expectConsistentStacks(middle, scenario)
    }

    @Test func anAbandonedTaskHasNoEndAndTheNextTaskFollows() throws {
        let scenario = try #require(BuiltinScenarios.named("wordpress"))
        let events = try Self.pass(Self.behaviour { $0.abandonedTasks = ["Edit blog posting"] })
        #expect(Self.markers(events) == ["begin Open the blog", "end Open the blog", "begin Edit blog posting",
                                         "begin Publish blog posting", "end Publish blog posting"])
        #expect(Self.appEvents(events) == ["BlogOpened", "User selects category “Work”", "PostPublished"])
        #expect(events.last?["type"] == .string("terminate"))
        Self.expectConsistentStacks(events, scenario)

        // Failing and abandoning in the other scenarios, whose tasks leave the app in other views, keeps them playable.
        for name in ["plainnote", "campus"] {
            let tasks = try #require(BuiltinScenarios.named(name)).tasks.map(\.name)
            let events = try Self.pass(Self.behaviour { $0.abandonedTasks = [tasks[0]]; $0.failedTasks = [tasks[1]]; $0.wander = 0.5 },
                                       scenario: name, seed: 9)
            #expect(Self.markers(events) == ["begin \(tasks[0])", "begin \(tasks[1])", "end \(tasks[1])"], "\(name)")
            #expect(Self.appEvents(events).isEmpty, "\(name): no task reached its goal")
            Self.expectConsistentStacks(events, try #require(BuiltinScenarios.named(name)))
        }
    }

    @Test func aWanderingParticipantOpensMoreViewsAndGoesBack() throws {
        let scenario = try #require(BuiltinScenarios.named("wordpress"))
        let ideal = try Self.pass(.ideal)
        let wandering = try Self.pass(Self.behaviour { $0.wander = 0.5 })
        #expect(Self.appeared(wandering).count > Self.appeared(ideal).count)
        #expect(Self.backtracks(wandering) > Self.backtracks(ideal))
        // A detour is not a failure: every task still reaches its goal.
        #expect(Self.markers(wandering) == Self.markers(ideal))
        #expect(Self.appEvents(wandering) == Self.appEvents(ideal))
        Self.expectConsistentStacks(wandering, scenario)
        // Every detour view appears with its UI state and screenshot, as any view does.
        for event in Self.appeared(wandering) {
            #expect(event["uiState"] != nil && event["screenshot"] != nil)
        }
        for name in BuiltinScenarios.names {
            let events = try Self.pass(Self.behaviour { $0.wander = 1 }, scenario: name, seed: 5)
            Self.expectConsistentStacks(events, try #require(BuiltinScenarios.named(name)))
            #expect(Self.appEvents(events) == Self.appEvents(try Self.pass(.ideal, scenario: name, seed: 5)), "\(name)")
        }
    }

    @Test func aMisclickRateOfOneMissesBeforeEveryTap() throws {
        let events = try Self.pass(Self.behaviour { $0.misclickRate = 1 })
        let taps = events.filter { $0["type"] == .string("gesture") && $0["gesture"] == .string("tap") }
        let hits = taps.indices.filter { taps[$0]["recognized"] == .bool(true) }
        #expect(hits.count >= 8)
        for index in hits {
            #expect(index > 0 && taps[index - 1]["recognized"] == .bool(false), "no miss before tap \(index): \(taps[index])")
        }
        let idealMisses = try Self.pass(.ideal).filter { $0["gesture"] == .string("tap") && $0["recognized"] == .bool(false) }.count
        #expect(taps.filter { $0["recognized"] == .bool(false) }.count >= idealMisses + hits.count)
    }

    @Test func aThinkScaleOfTwoTakesLongerOnEveryTask() throws {
        let ideal = try Self.pass(.ideal)
        let slow = try Self.pass(Self.behaviour { $0.thinkScale = 2 })
        for task in try #require(BuiltinScenarios.named("wordpress")).tasks.map(\.name) {
            let quick = Self.during(task, ideal), slower = Self.during(task, slow)
            let quickTime = Self.time(ideal[quick.endIndex]) - Self.time(quick.first!)
            let slowTime = Self.time(slow[slower.endIndex]) - Self.time(slower.first!)
            #expect(slowTime > quickTime + 1, "\(task): \(slowTime) s against \(quickTime) s")
        }
        #expect(Self.markers(slow) == Self.markers(ideal))
    }

    @Test func theSameSeedAndBehaviourSendTheSameBytes() throws {
        let behaviour = Self.behaviour {
            $0.failedTasks = ["Open the blog"]
            $0.abandonedTasks = ["Publish blog posting"]
            $0.wander = 0.4
            $0.misclickRate = 0.3
            $0.thinkScale = 1.5
        }
        let first = try Self.bytes(behaviour, seed: 11), again = try Self.bytes(behaviour, seed: 11)
        let otherSeed = try Self.bytes(behaviour, seed: 12), otherBehaviour = try Self.bytes(Self.behaviour { $0.wander = 0.4 }, seed: 11)
        #expect(first == again)
        #expect(first != otherSeed)
        #expect(first != otherBehaviour)
    }

    @Test func invalidBehavioursAreRefusedWithWhatIsValid() throws {
        let scenario = try #require(BuiltinScenarios.named("wordpress"))
        let cases: [(ParticipantBehaviour, String)] = [
            (Self.behaviour { $0.wander = 1.5 }, "--wander is a probability from 0 to 1, not 1.5"),
            (Self.behaviour { $0.misclickRate = -0.1 }, "--misclick-rate is a probability from 0 to 1, not -0.1"),
            (Self.behaviour { $0.misclickRate = .nan }, "--misclick-rate is a probability from 0 to 1, not nan"),
            (Self.behaviour { $0.thinkScale = 0 }, "--think-scale must be positive, not 0.0"),
            (Self.behaviour { $0.failedTasks = ["Publish"] },
             #"--fail-task: scenario "wordpress" has no task "Publish"; its tasks: "Open the blog", "Edit blog posting", "Publish blog posting""#),
            (Self.behaviour { $0.abandonedTasks = ["Write a note"] },
             #"--abandon-task: scenario "wordpress" has no task "Write a note"; its tasks: "Open the blog", "Edit blog posting", "Publish blog posting""#),
            (Self.behaviour { $0.failedTasks = ["Open the blog"]; $0.abandonedTasks = ["Open the blog"] },
             #"task "Open the blog" is given to both --fail-task and --abandon-task; a participant either fails it or abandons it"#),
        ]
        for (behaviour, message) in cases {
            #expect(throws: BehaviourError.self) { try behaviour.validate(for: scenario) }
            do {
                try behaviour.validate(for: scenario)
            } catch {
                #expect(error.description == message)
            }
        }
        try Self.behaviour { $0.wander = 1; $0.misclickRate = 0; $0.failedTasks = ["Open the blog"] }.validate(for: scenario)
    }
}

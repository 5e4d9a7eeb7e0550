internal import MuEvalWire
internal import WireProtocol

/// Plays a scenario as one tester on one phone: each pass launches the app, works through the tasks and
/// terminates it, and yields the events a capture library would have recorded, on a simulated clock.
/// Everything follows from the seed, so two players with the same seed produce the same events.
/// A `ParticipantBehaviour` makes the tester fail or abandon tasks, wander, misclick or take longer.
public struct ScenarioPlayer {
    public let scenario: Scenario
    public let behaviour: ParticipantBehaviour
    /// The tasks the server gave (`--invitation`), in its order, each marked by the tester themself (begin, end,
    /// give up); nil: the scenario's tasks in its order, marked by the app's task events.
    var assigned: [AssignedTask]?
    var random: SeededGenerator
    /// The behaviour's choices (detour or not, where to, misclick or not) come from their own stream, so that the
    /// ideal tester's events do not depend on them.
    var whims: SeededGenerator
    var sensors: SensorModel
    var clock = 0.0
    var stack: [Presented] = []
    /// Text typed into fields, per view and element id; a new pass starts with empty fields.
    var typed: [String: [String: String]] = [:]
    /// Content offsets of scroll views, per view and element id.
    var scrolled: [String: [String: Double]] = [:]
    var events: [SimulatedEvent] = []
    /// What the tester said in the pass, on the simulated clock (with `behaviour.thinksAloud`).
    public internal(set) var spoken: [SpokenLine] = []
    var exclaimed = 0

    public init(scenario: Scenario, random: SeededGenerator, behaviour: ParticipantBehaviour = .ideal) {
        self.scenario = scenario
        self.behaviour = behaviour
        self.random = random.derived(1)
        whims = random.derived(3)
        sensors = SensorModel(random: random.derived(2), location: scenario.location,
                              frameTiming: behaviour.frameTiming ? scenario.views.map(\.name) : nil)
    }

    /// The events of the next pass through the scenario, in time order.
    public mutating func nextPass() -> [SimulatedEvent] {
        events = []
        spoken = []
        stack = [Presented(view: scenario.view(named: scenario.initialView)!, modal: false)]
        typed = [:]
        scrolled = [:]
        emit(.application, ["type": .string("launch"), "appId": .string(scenario.app.id), "appName": .string(scenario.app.name),
                            "appVersion": .string(scenario.app.version)])
        events += sensors.snapshot(at: clock)
        clock += 0.4
        viewDidAppear(transition: "launch", from: nil)
        if let assigned {
            let starts = taskStarts()
            for task in assigned {
                if let spec = scenario.tasks.first(where: { $0.name == task.name }) {
                    // In another order than the scenario's, the tester first goes where the task starts.
                    if let start = starts[spec.name] { restore(start) }
                    perform(spec, outcome: behaviour.outcome(of: task.name), byTester: true)
                } else {
                    // Nothing to play: the tester reads it, begins it and gives it up.
                    think()
                    mark(.begin, task.name, byTester: true)
                    think()
                    mark(.giveUp, task.name, byTester: true)
                }
            }
        } else {
            for task in scenario.tasks { perform(task, outcome: behaviour.outcome(of: task.name), byTester: false) }
        }
        think()
        emit(.application, ["type": .string("terminate")])
        sensors.stop()
        // The next tester picks the phone up a little later.
        clock += random.uniform(5...15)
        return events
    }

    /// The views each task starts on when the scenario is played in its own order (every task, however it goes,
    /// leaves the app where its steps would).
    func taskStarts() -> [String: [Presented]] {
        var stack = [Presented(view: scenario.view(named: scenario.initialView)!, modal: false)]
        var starts: [String: [Presented]] = [:]
        for task in scenario.tasks {
            starts[task.name] = starts[task.name] ?? stack
            stack = task.steps.compactMap(\.navigation).reduce(into: stack) { $0.apply($1, in: scenario) }
        }
        return starts
    }

    /// One task as `outcome` says, between the tester's own marks or the app's task events. An abandoned task
    /// never gets the app's end; the tester says they give it up.
    mutating func perform(_ task: TaskSpec, outcome: ParticipantBehaviour.Outcome, byTester: Bool) {
        think()
        mark(.begin, task.name, byTester: byTester)
        if outcome == .completed {
            for step in task.steps { attempt(step, of: task) }
            clock += random.uniform(0.2...0.6)
            mark(.end, task.name, byTester: byTester)
        } else {
            // Where the task would have left the app: the next task starts there.
            let expected = task.steps.compactMap(\.navigation).reduce(into: stack) { $0.apply($1, in: scenario) }
            for step in task.steps.prefix(task.steps.count / 2) { attempt(step, of: task) }
            // Lost: a look elsewhere and a tap beside the controls, then the tester stops.
            detour(avoiding: task, next: nil)
            think()
            missTap()
            if behaviour.shakes {
                let shake = sensors.shake(at: clock)
                for sample in shake.events { emit(sample) }
                clock += shake.duration
            }
            if behaviour.thinksAloud {
                say(ParticipantBehaviour.exclamations[exclaimed % ParticipantBehaviour.exclamations.count])
                exclaimed += 1
            }
            clock += random.uniform(0.2...0.6)
            if outcome == .failed {
                mark(.end, task.name, byTester: byTester)
            } else if byTester {
                mark(.giveUp, task.name, byTester: true)
            }
            // After the task, not within it: its target view is not reached while it runs.
            restore(expected)
        }
    }

    // MARK: Steps

    var top: ViewSpec { stack[stack.count - 1].view }

    /// A step, after a detour when the participant wanders.
    mutating func attempt(_ step: Step, of task: TaskSpec) {
        if whims.chance(behaviour.wander) { detour(avoiding: task, next: step) }
        play(step)
    }

    /// A look at a view the task does not need, and back: an extra view and a backtrack for the analysis. The view
    /// is one the task does not go to and not on the stack; else any not on the stack but where the next step goes;
    /// with none left (every view on the stack) the tester only taps beside the controls.
    mutating func detour(avoiding task: TaskSpec, next step: Step?) {
        let onStack = Set(stack.map(\.view.name))
        let needed = Set(task.steps.compactMap { $0.navigation?.destination })
        var candidates = scenario.views.filter { !onStack.contains($0.name) && !needed.contains($0.name) }
        if candidates.isEmpty {
            let next = step?.navigation?.destination
            candidates = scenario.views.filter { !onStack.contains($0.name) && $0.name != next }
        }
        think()
        guard let view = candidates.randomElement(using: &whims) else {
            missTap()
            return
        }
        let modal = whims.chance(0.3)
        navigate(modal ? .modal(view.name) : .push(view.name))
        think()
        if whims.chance(0.5) {
            missTap()
            think()
        }
        navigate(modal ? .dismiss : .pop)
    }

    /// Brings the app back to the views `expected` (the observer's or the tester's way back after a failed task):
    /// back until the stack is a start of it, then forward to it.
    mutating func restore(_ expected: [Presented]) {
        while !expected.map(\.view.name).starts(with: stack.map(\.view.name)) {
            think()
            navigate(stack[stack.count - 1].modal ? .dismiss : .pop)
        }
        for missing in expected.dropFirst(stack.count) {
            think()
            navigate(missing.modal ? .modal(missing.view.name) : .push(missing.view.name))
        }
    }

    mutating func play(_ step: Step) {
        if step.do == .say {
            if behaviour.thinksAloud {
                think()
                say(step.text!)
            }
            return
        }
        if step.do == .wait { clock += step.seconds ?? 3 } else { think() }
        let element = step.on.flatMap(top.element)
        switch step.do {
        case .tap:
            tap(element!, row: step.row)
        case .type:
            tap(element!)
            type(step.text!, into: element!)
        case .swipe:
            gesture("swipe", on: element!, direction: step.direction ?? .left, distance: step.distance ?? 120,
                    duration: random.uniform(0.12...0.25), recognizer: "UISwipeGestureRecognizer", handled: step.name)
        case .scroll:
            let direction = step.direction ?? .up
            let moved = gesture("scroll", on: element!, direction: direction, distance: step.distance ?? 200,
                                duration: random.uniform(0.4...0.8), recognizer: "UIScrollViewPanGestureRecognizer", handled: step.name)
            scrollBy(-(direction.vector.dy * moved), element!)
        case .drag:
            gesture("drag", on: element!, direction: step.direction ?? .down, distance: step.distance ?? 100,
                    duration: random.uniform(0.5...1.0), recognizer: "UIPanGestureRecognizer", handled: step.name)
        case .miss:
            missTap()
        case .navigate, .wait, .say:
            break
        case .custom:
            emit(.custom, ["name": .string(step.name!)])
        case .rotate:
            emit(sensors.rotate(to: step.orientation!, at: clock))
        case .background:
            emit(.application, ["type": .string("background")])
            clock += step.seconds ?? 10
            emit(.application, ["type": .string("foreground")])
            if let change = sensors.networkMayChange(at: clock) { emit(change) }
        case .exception:
            emit(.application, [
                "type": .string("exception"), "name": .string(step.name!),
                "reason": .string(step.text ?? "an exception was raised and caught"), "fatal": .bool(false),
                "callStack": .array(["0 CoreFoundation __exceptionPreprocess", "1 libobjc.A.dylib objc_exception_throw",
                                     "2 \(scenario.app.name) -[\(top.name) viewDidLoad]"].map(PlistValue.string)),
            ])
        }
        if let navigation = step.navigation { navigate(navigation) }
    }

    // MARK: Pacing

    /// A line said now; the tester goes on once it is said (about 2.6 words a second, as espeak-ng speaks at 155).
    mutating func say(_ text: String) {
        let duration = 0.4 + Double(text.split(separator: " ").count) * 0.38
        spoken.append(SpokenLine(time: clock, duration: duration, text: text))
        clock += duration + 0.3
    }

    /// Time to look at the screen and decide, before the next step.
    mutating func think() {
        clock += random.uniform(0.6...2.4) * behaviour.thinkScale
    }
}

/// A view controller on the navigation stack, and whether it was presented modally (it goes with a dismiss, not a pop).
struct Presented {
    let view: ViewSpec
    let modal: Bool
}

extension [Presented] {
    /// The stack after `navigation`; scenarios are checked when loaded (`ScenarioLoader.validate`), so the view exists.
    mutating func apply(_ navigation: Navigation, in scenario: Scenario) {
        switch navigation {
        case .push(let name): append(Presented(view: scenario.view(named: name)!, modal: false))
        case .modal(let name): append(Presented(view: scenario.view(named: name)!, modal: true))
        case .pop, .dismiss: removeLast()
        }
    }
}

/// A line the tester said, on the simulated clock (seconds since the run's start).
public struct SpokenLine: Sendable, Equatable {
    public var time: Double
    /// How long the tester takes to say it (the clock moves on by this much); the audio is as long as espeak-ng makes it.
    public var duration: Double
    public var text: String
}

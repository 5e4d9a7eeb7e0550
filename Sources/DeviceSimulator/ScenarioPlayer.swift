internal import OrderedCollections
internal import WireProtocol

/// Plays a scenario as one tester on one phone: each pass launches the app, works through the tasks and
/// terminates it, and yields the events a capture library would have recorded, on a simulated clock.
/// Everything follows from the seed, so two players with the same seed produce the same events.
/// A `ParticipantBehaviour` makes the tester fail or abandon tasks, wander, misclick or take longer.
public struct ScenarioPlayer {
    public let scenario: Scenario
    public let behaviour: ParticipantBehaviour
    private var random: SeededGenerator
    /// The behaviour's choices (detour or not, where to, misclick or not) come from their own stream, so that the
    /// ideal tester's events do not depend on them.
    private var whims: SeededGenerator
    private var sensors: SensorModel
    private var clock = 0.0
    private var stack: [Presented] = []
    /// Text typed into fields, per view and element id; a new pass starts with empty fields.
    private var typed: [String: [String: String]] = [:]
    /// Content offsets of scroll views, per view and element id.
    private var scrolled: [String: [String: Double]] = [:]
    private var events: [SimulatedEvent] = []
    /// What the tester said in the pass, on the simulated clock (with `behaviour.thinksAloud`).
    public private(set) var spoken: [SpokenLine] = []
    private var exclaimed = 0

    public init(scenario: Scenario, random: SeededGenerator, behaviour: ParticipantBehaviour = .ideal) {
        self.scenario = scenario
        self.behaviour = behaviour
        self.random = random.derived(1)
        whims = random.derived(3)
        sensors = SensorModel(random: random.derived(2), location: scenario.location)
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
        for task in scenario.tasks {
            think()
            marker("begin", task.name)
            let outcome = behaviour.outcome(of: task.name)
            if outcome == .completed {
                for step in task.steps { attempt(step, of: task) }
                clock += random.uniform(0.2...0.6)
                marker("end", task.name)
            } else {
                // Where the task would have left the app: the next task starts there.
                let expected = task.steps.compactMap(\.navigation).reduce(into: stack) { $0.apply($1, in: scenario) }
                for step in task.steps.prefix(task.steps.count / 2) { attempt(step, of: task) }
                // Lost: a look elsewhere and a tap beside the controls, then the tester stops.
                detour(avoiding: task, next: nil)
                think()
                missTap()
                if behaviour.thinksAloud {
                    say(ParticipantBehaviour.exclamations[exclaimed % ParticipantBehaviour.exclamations.count])
                    exclaimed += 1
                }
                clock += random.uniform(0.2...0.6)
                if outcome == .failed { marker("end", task.name) }
                // After the task, not within it: its target view is not reached while it runs.
                restore(expected)
            }
        }
        think()
        emit(.application, ["type": .string("terminate")])
        sensors.stop()
        // The next tester picks the phone up a little later.
        clock += random.uniform(5...15)
        return events
    }

    // MARK: Steps

    private var top: ViewSpec { stack[stack.count - 1].view }

    /// A step, after a detour when the participant wanders.
    private mutating func attempt(_ step: Step, of task: TaskSpec) {
        if whims.chance(behaviour.wander) { detour(avoiding: task, next: step) }
        play(step)
    }

    /// A look at a view the task does not need, and back: an extra view and a backtrack for the analysis. The view
    /// is one the task does not go to and not on the stack; else any not on the stack but where the next step goes;
    /// with none left (every view on the stack) the tester only taps beside the controls.
    private mutating func detour(avoiding task: TaskSpec, next step: Step?) {
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
    private mutating func restore(_ expected: [Presented]) {
        while !expected.map(\.view.name).starts(with: stack.map(\.view.name)) {
            think()
            navigate(stack[stack.count - 1].modal ? .dismiss : .pop)
        }
        for missing in expected.dropFirst(stack.count) {
            think()
            navigate(missing.modal ? .modal(missing.view.name) : .push(missing.view.name))
        }
    }

    private mutating func play(_ step: Step) {
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

    /// A finger down and up inside the element, then what the element does with it.
    private mutating func tap(_ element: ElementSpec, row: Int? = nil) {
        if whims.chance(behaviour.misclickRate) {
            missTap()
            clock += random.uniform(0.3...0.9) * behaviour.thinkScale
        }
        let offset = scrolled[top.name]?[element.id] ?? 0
        let rowFrame = row.map { Frame(x: element.frame.x, y: element.frame.y + Double($0) * ScreenRenderer.rowHeight - offset,
                                       width: element.frame.width, height: ScreenRenderer.rowHeight) }
        let point = point(in: rowFrame ?? element.frame)
        touch(at: point, phases: ["began", "ended"], target: element)
        emit(.userInput, gestureFields("tap", path: [point], duration: 0.1, recognized: element.isInteractive, target: element))
        if element.acceptsText {
            emit(.userInterface, ["type": .string("editingDidBegin"), "view": .string(top.name), "sender": describe(element)])
        } else if element.isControl {
            emit(.userInterface, ["type": .string("action"), "event": .string("touchUpInside"),
                                  "action": .string(element.action ?? "buttonPressed:"), "view": .string(top.name), "sender": describe(element)])
        } else if let rows = element.rows {
            let row = Int((point.y - element.frame.y + offset) / ScreenRenderer.rowHeight)
            if row < rows.count {
                emit(.userInterface, ["type": .string("didSelectRow"), "view": .string(top.name), "row": .integer(Int64(row)),
                                      "title": .string(rows[row]), "sender": describe(element)])
            }
        }
    }

    /// A tap where no control is (the background, between elements): the touch is logged and nothing happens.
    private mutating func missTap() {
        let width = Double(scenario.deviceModel.width), height = Double(scenario.deviceModel.height)
        var point = (x: 4.0, y: 10.0)  // the status bar: no control is ever there
        for _ in 0..<50 {
            let candidate = (x: snap(random.uniform(0...width - 1)), y: snap(random.uniform(screen.contentTop...height - 1)))
            if screen.element(atX: candidate.x, y: candidate.y)?.isInteractive != true {
                point = candidate
                break
            }
        }
        let target = screen.element(atX: point.x, y: point.y)
        touch(at: point, phases: ["began", "ended"], target: target)
        emit(.userInput, gestureFields("tap", path: [point], duration: 0.1, recognized: false, target: target))
    }

    /// A moving touch inside the element; returns how far the finger moved (the distance, shortened to fit).
    @discardableResult
    private mutating func gesture(_ kind: String, on element: ElementSpec, direction: Direction, distance: Double,
                                  duration: Double, recognizer: String, handled: String?) -> Double {
        let frame = element.frame
        let (dx, dy) = direction.vector
        let span = dx != 0 ? frame.width : frame.height
        let moved = min(distance, span * 0.8)
        // Start where the whole movement stays inside the frame.
        let xRange = dx < 0 ? (frame.x + moved)...(frame.x + frame.width - 1) : dx > 0 ? frame.x...(frame.x + frame.width - 1 - moved) : frame.x...(frame.x + frame.width - 1)
        let yRange = dy < 0 ? (frame.y + moved)...(frame.y + frame.height - 1) : dy > 0 ? frame.y...(frame.y + frame.height - 1 - moved) : frame.y...(frame.y + frame.height - 1)
        let start = (x: snap(random.uniform(xRange)), y: snap(random.uniform(yRange)))
        let steps = Int(random.uniform(4...8))
        var path = [start]
        for index in 1...steps {
            let progress = Double(index) / Double(steps)
            // Fingers drift a little across the movement.
            let drift = random.gaussian(sigma: 1.5)
            let x = start.x + dx * moved * progress + (dx == 0 ? drift : 0)
            let y = start.y + dy * moved * progress + (dy == 0 ? drift : 0)
            path.append((x: snap(min(max(x, frame.x), frame.x + frame.width - 1)), y: snap(min(max(y, frame.y), frame.y + frame.height - 1))))
        }
        let began = clock
        for (index, point) in path.enumerated() {
            clock = began + duration * Double(index) / Double(steps)
            emitTouch(point, phase: index == 0 ? "began" : index == steps ? "ended" : "moved", target: element, tapCount: 0)
        }
        var fields = gestureFields(kind, path: path, duration: duration, recognized: true, target: element)
        fields["direction"] = .string(direction.rawValue)
        fields["recognizer"] = .string(recognizer)
        fields["handledAs"] = handled.map(PlistValue.string)
        emit(.userInput, fields)
        return moved
    }

    private mutating func scrollBy(_ delta: Double, _ element: ElementSpec) {
        let contentHeight = Double(element.rows?.count ?? 0) * ScreenRenderer.rowHeight
        let limit = max(0, contentHeight - element.frame.height)
        let offset = min(max(0, (scrolled[top.name]?[element.id] ?? 0) + delta), limit)
        scrolled[top.name, default: [:]][element.id] = offset
        emit(.userInterface, ["type": .string("scrollViewDidEndDragging"), "view": .string(top.name), "sender": describe(element),
                              "contentOffset": .dict(["x": .real(0), "y": .real(offset)])])
    }

    /// Text entry, a word at a time as the field's editingChanged notifications coalesce it.
    private mutating func type(_ text: String, into element: ElementSpec) {
        var current = typed[top.name]?[element.id] ?? element.text ?? ""
        let words = text.split(separator: " ", omittingEmptySubsequences: false)
        for (index, word) in words.enumerated() {
            let inserted = (index == 0 || current.isEmpty ? "" : " ") + word
            clock += Double(inserted.count) * random.uniform(0.15...0.32)
            current += inserted
            typed[top.name, default: [:]][element.id] = current
            let shown = screen.displayedText(of: element) ?? ""
            emit(.userInput, ["type": .string("text"), "view": .string(top.name), "target": describe(element),
                              "inserted": .string(element.secure == true ? String(repeating: "•", count: inserted.count) : inserted),
                              "text": .string(shown)])
        }
    }

    // MARK: Views

    private mutating func navigate(_ navigation: Navigation) {
        let from = top.name
        stack.apply(navigation, in: scenario)
        emit(.userInterface, ["type": .string("viewWillDisappear"), "view": .string(from)])
        clock += 0.35  // the transition's animation
        viewDidAppear(transition: navigation.transition, from: from)
    }

    private var screen: Screen { Screen(device: scenario.deviceModel, view: top, typed: typed[top.name] ?? [:]) }

    /// The view change with everything an analyst needs to see the screen: stack, UI state tree, screenshot.
    private mutating func viewDidAppear(transition: String, from: String?) {
        let screen = screen
        var fields: OrderedDictionary<String, PlistValue> = ["type": .string("viewDidAppear"), "transition": .string(transition),
                                                             "view": .string(top.name)]
        fields["title"] = top.title.map(PlistValue.string)
        fields["previousView"] = from.map(PlistValue.string)
        fields["viewStack"] = .array(stack.map { .string($0.view.name) })
        fields["uiState"] = screen.uiState
        fields["screenshot"] = .data(ScreenRenderer.png(of: screen))
        emit(.userInterface, fields)
    }

    // MARK: Building events

    private mutating func touch(at point: (x: Double, y: Double), phases: [String], target: ElementSpec?) {
        for phase in phases {
            emitTouch(point, phase: phase, target: target, tapCount: 1)
            if phase == "began" { clock += random.uniform(0.06...0.16) }
        }
    }

    private mutating func emitTouch(_ point: (x: Double, y: Double), phase: String, target: ElementSpec?, tapCount: Int64) {
        var fields: OrderedDictionary<String, PlistValue> = [
            "type": .string("touch"), "phase": .string(phase), "x": .real(point.x), "y": .real(point.y),
            "tapCount": .integer(tapCount), "view": .string(top.name),
        ]
        fields["target"] = target.map(describe)
        emit(.userInput, fields)
    }

    private func gestureFields(_ kind: String, path: [(x: Double, y: Double)], duration: Double, recognized: Bool,
                               target: ElementSpec?) -> OrderedDictionary<String, PlistValue> {
        var fields: OrderedDictionary<String, PlistValue> = [
            "type": .string("gesture"), "gesture": .string(kind), "view": .string(top.name), "recognized": .bool(recognized),
            "duration": .real(rounded(duration, 3)),
            "path": .array(path.map { .array([.real($0.x), .real($0.y)]) }),
        ]
        fields["target"] = target.map(describe)
        return fields
    }

    private func describe(_ element: ElementSpec) -> PlistValue {
        var fields: OrderedDictionary<String, PlistValue> = ["className": .string(element.class), "id": .string(element.id)]
        fields["title"] = element.title.map(PlistValue.string)
        fields["frame"] = Screen.frameValue(element.frame)
        return .dict(fields)
    }

    private mutating func marker(_ kind: String, _ name: String) {
        emit(.custom, ["name": .string(name), "marker": .string(kind), "call": .string("[monitor \(kind)Event: @\"\(name)\"]")])
    }

    private mutating func emit(_ eventClass: EventClass, _ fields: OrderedDictionary<String, PlistValue>) {
        emit(SimulatedEvent(eventClass, at: clock, fields))
    }

    /// Appends the event after the sensor samples that fell due before it, so that time never runs backwards.
    private mutating func emit(_ event: SimulatedEvent) {
        events += sensors.samples(until: event.time)
        events.append(event)
    }

    /// Time to look at the screen and decide, before the next step.
    /// A line said now; the tester goes on once it is said (about 2.6 words a second, as espeak-ng speaks at 155).
    private mutating func say(_ text: String) {
        let duration = 0.4 + Double(text.split(separator: " ").count) * 0.38
        spoken.append(SpokenLine(time: clock, duration: duration, text: text))
        clock += duration + 0.3
    }

    private mutating func think() {
        clock += random.uniform(0.6...2.4) * behaviour.thinkScale
    }

    /// A point well inside the frame: fingers aim at the middle of a control.
    private mutating func point(in frame: Frame) -> (x: Double, y: Double) {
        (x: snap(frame.x + frame.width * random.uniform(0.15...0.85)), y: snap(frame.y + frame.height * random.uniform(0.15...0.85)))
    }

    /// Touch coordinates come in half points on a Retina screen.
    private func snap(_ value: Double) -> Double { (value * 2).rounded(.down) / 2 }
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

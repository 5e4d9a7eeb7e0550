internal import MuEvalCapture
internal import MuEvalWire
internal import OrderedCollections
internal import WireProtocol

/// The events a pass yields: view changes, touches and markers, each after the sensor samples due before it.
extension ScenarioPlayer {
    // MARK: Views

    mutating func navigate(_ navigation: Navigation) {
        let from = top.name
        stack.apply(navigation, in: scenario)
        emit(.userInterface, ["type": .string("viewWillDisappear"), "view": .string(from)])
        clock += 0.35  // the transition's animation
        viewDidAppear(transition: navigation.transition, from: from)
    }

    var screen: Screen { Screen(device: scenario.deviceModel, view: top, typed: typed[top.name] ?? [:]) }

    /// The view change with everything an analyst needs to see the screen: stack, UI state tree, screenshot.
    mutating func viewDidAppear(transition: String, from: String?) {
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

    mutating func touch(at point: (x: Double, y: Double), phases: [String], target: ElementSpec?) {
        for phase in phases {
            emitTouch(point, phase: phase, target: target, tapCount: 1)
            if phase == "began" { clock += random.uniform(0.06...0.16) }
        }
    }

    mutating func emitTouch(_ point: (x: Double, y: Double), phase: String, target: ElementSpec?, tapCount: Int64) {
        var fields: OrderedDictionary<String, PlistValue> = [
            "type": .string("touch"), "phase": .string(phase), "x": .real(point.x), "y": .real(point.y),
            "tapCount": .integer(tapCount), "view": .string(top.name),
        ]
        fields["target"] = target.map(describe)
        emit(.userInput, fields)
    }

    func gestureFields(_ kind: String, path: [(x: Double, y: Double)], duration: Double, recognized: Bool,
                               target: ElementSpec?) -> OrderedDictionary<String, PlistValue> {
        var fields: OrderedDictionary<String, PlistValue> = [
            "type": .string("gesture"), "gesture": .string(kind), "view": .string(top.name), "recognized": .bool(recognized),
            "duration": .real(rounded(duration, 3)),
            "path": .array(path.map { .array([.real($0.x), .real($0.y)]) }),
        ]
        fields["target"] = target.map(describe)
        return fields
    }

    func describe(_ element: ElementSpec) -> PlistValue {
        var fields: OrderedDictionary<String, PlistValue> = ["className": .string(element.class), "id": .string(element.id)]
        fields["title"] = element.title.map(PlistValue.string)
        fields["frame"] = Screen.frameValue(element.frame)
        return .dict(fields)
    }

    /// A task's mark: the tester's own (the capture library's `beginTask`, …), or the app's task event, as the
    /// thesis's `[monitor beginEvent: @"…"]` sends it (the app has no give-up).
    mutating func mark(_ mark: CaptureEvent.TaskMark, _ name: String, byTester: Bool) {
        if byTester {
            emit(.custom, CaptureEvent.taskMark(mark, name).fields)
        } else {
            emit(.custom, ["name": .string(name), "marker": .string(mark.rawValue), "call": .string("[monitor \(mark.rawValue)Event: @\"\(name)\"]")])
        }
    }

    mutating func emit(_ eventClass: EventClass, _ fields: OrderedDictionary<String, PlistValue>) {
        emit(SimulatedEvent(eventClass, at: clock, fields))
    }

    /// Appends the event after the sensor samples that fell due before it, so that time never runs backwards,
    /// and the frame-timing readings it brings about after it.
    mutating func emit(_ event: SimulatedEvent) {
        events += sensors.samples(until: event.time)
        events.append(event)
        events += sensors.frameTiming(after: event)
    }
}

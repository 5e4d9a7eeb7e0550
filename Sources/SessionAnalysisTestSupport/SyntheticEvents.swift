public import MuEvalWire
internal import OrderedCollections
public import WireProtocol

/// The events of a capture library in the simulator's vocabulary (Sources/DeviceSimulator), for building
/// journals with known answers.
extension JournalBuilder {
    public static func element(_ className: String, id: String, frame: [Double], title: String? = nil) -> PlistValue {
        var fields: OrderedDictionary<String, PlistValue> = ["className": .string(className), "id": .string(id)]
        fields["title"] = title.map(PlistValue.string)
        fields["frame"] = frameValue(frame)
        return .dict(fields)
    }

    static func frameValue(_ frame: [Double]) -> PlistValue {
        .dict(["height": .real(frame[3]), "width": .real(frame[2]), "x": .real(frame[0]), "y": .real(frame[1])])
    }

    /// A UI state tree node (thesis Listing 4.2).
    public static func node(_ className: String, frame: [Double], placeholder: String? = nil, title: String? = nil,
                            text: String? = nil, fontSize: Double? = nil, subviews: [PlistValue] = []) -> PlistValue {
        var fields: OrderedDictionary<String, PlistValue> = ["className": .string(className), "frame": frameValue(frame)]
        fields["title"] = title.map(PlistValue.string)
        fields["placeholder"] = placeholder.map(PlistValue.string)
        fields["text"] = text.map(PlistValue.string)
        fields["fontSize"] = fontSize.map(PlistValue.real)
        fields["subviews"] = .array(subviews)
        return .dict(fields)
    }

    public func touch(at time: Double, x: Double, y: Double, phase: String, view: String, target: PlistValue? = nil) {
        var fields: OrderedDictionary<String, PlistValue> = [
            "type": .string("touch"), "phase": .string(phase), "x": .real(x), "y": .real(y), "tapCount": .integer(1),
            "view": .string(view),
        ]
        fields["target"] = target
        add("UserInputEvent", at: time, fields)
    }

    /// Finger down and up 0.1 s later at one point.
    public func tap(at time: Double, x: Double, y: Double, view: String, target: PlistValue? = nil) {
        touch(at: time, x: x, y: y, phase: "began", view: view, target: target)
        touch(at: time + 0.1, x: x, y: y, phase: "ended", view: view, target: target)
    }

    /// A moving finger through `points`, over `duration`, then the recognised gesture.
    public func swipe(at time: Double, points: [(Double, Double)], duration: Double, view: String, gesture: String = "swipe") {
        for (index, point) in points.enumerated() {
            let phase = index == 0 ? "began" : index == points.count - 1 ? "ended" : "moved"
            touch(at: time + duration * Double(index) / Double(points.count - 1), x: point.0, y: point.1, phase: phase, view: view)
        }
        add("UserInputEvent", at: time + duration, [
            "type": .string("gesture"), "gesture": .string(gesture), "view": .string(view), "recognized": .bool(true),
            "path": .array(points.map { .array([.real($0.0), .real($0.1)]) }),
        ])
    }

    public func action(at time: Double, view: String, sender: PlistValue? = nil) {
        var fields: OrderedDictionary<String, PlistValue> = ["type": .string("action"), "event": .string("touchUpInside"),
                                                             "action": .string("buttonPressed:"), "view": .string(view)]
        fields["sender"] = sender
        add("UserInterfaceEvent", at: time, fields)
    }

    public func viewDidAppear(at time: Double, view: String, transition: String, stack: [String],
                              screenshot: [UInt8]? = nil, uiState: PlistValue? = nil) {
        var fields: OrderedDictionary<String, PlistValue> = ["type": .string("viewDidAppear"), "transition": .string(transition),
                                                             "view": .string(view)]
        fields["viewStack"] = .array(stack.map(PlistValue.string))
        fields["uiState"] = uiState
        fields["screenshot"] = screenshot.map(PlistValue.data)
        add("UserInterfaceEvent", at: time, fields)
    }

    public func marker(at time: Double, _ kind: String, task: String) {
        add("CustomEvent", at: time, ["name": .string(task), "marker": .string(kind),
                                      "call": .string("[monitor \(kind)Event: @\"\(task)\"]")])
    }

    /// The tester's own task mark (the capture library's `beginTask`, `endTask`, `giveUpTask`): `begin`, `end` or `giveUp`.
    public func testerMark(at time: Double, _ kind: String, task: String) {
        add("CustomEvent", at: time, ["name": .string(task), "marker": .string(kind), "by": .string("tester")])
    }

    /// A custom event that is not a task marker (a task's success event).
    public func custom(at time: Double, name: String) {
        add("CustomEvent", at: time, ["name": .string(name)])
    }

    /// An observer's note or task mark, stored as muevald stores it.
    public func note(_ note: ObserverNote, at time: Double) {
        guard case .dict(let fields) = note.payload else { return }
        add(ObserverNote.eventClass, at: time, fields)
    }

    public func application(at time: Double, _ type: String) {
        add("ApplicationEvent", at: time, ["type": .string(type)])
    }

    public func accelerometer(at time: Double, x: Double, y: Double, z: Double) {
        add("DeviceSensorEvent", at: time, ["sensor": .string("accelerometer"), "x": .real(x), "y": .real(y), "z": .real(z)])
    }

    /// A DeviceSensorEvent of `sensor` with `values` after its name.
    public func sensor(_ sensor: String, at time: Double, _ values: KeyValuePairs<String, PlistValue>) {
        var fields: OrderedDictionary<String, PlistValue> = ["sensor": .string(sensor)]
        for (key, value) in values { fields[key] = value }
        add("DeviceSensorEvent", at: time, fields)
    }
}

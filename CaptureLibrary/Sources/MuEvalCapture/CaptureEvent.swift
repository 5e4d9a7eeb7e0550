public import OrderedCollections
public import MuEvalWire

/// One usability event as an app records it, before it gets its `seq` (and, unless given, its time
/// stamp): the thesis's five event classes with the fields muEval's analysis reads.
public struct CaptureEvent: Sendable, Equatable {
    public var eventClass: EventClass
    /// Every key but `class`, `timestamp` and `seq`, which the library writes.
    public var fields: OrderedDictionary<String, PlistValue>
    /// Device time, seconds since 1970; nil: when `record` is called (`CaptureClock`).
    public var timestamp: Double?

    public init(_ eventClass: EventClass, _ fields: OrderedDictionary<String, PlistValue> = [:], timestamp: Double? = nil) {
        self.eventClass = eventClass
        self.fields = fields
        self.timestamp = timestamp
    }

    /// The `sensor` field, which the session's sensor selection matches.
    public var sensor: String? {
        if case .string(let name)? = fields["sensor"] { return name }
        return nil
    }

    /// The `<event>` message: class, timestamp (a `<real>` to the millisecond, for the analysis'
    /// precision) and seq first, then the fields in their order.
    public func encoded(seq: Int64, timestamp: Double) -> [UInt8] {
        WireEncoder.event(class: eventClass.rawValue, timestamp: (timestamp * 1000).rounded() / 1000, seq: seq, fields: fields)
    }
}

// The typed helpers: the shapes the simulator sends and the analysis reads (docs/CAPTURE-LIBRARY.md
// lists them; docs/SIMULATOR.md shows them on the wire).
extension CaptureEvent {
    public enum TouchPhase: String, Sendable { case began, moved, stationary, ended, cancelled }

    /// A finger on the screen (UserInputEvent `touch`), in points of the screen the `<hello>` gave.
    public static func touch(_ phase: TouchPhase, x: Double, y: Double, view: String, tapCount: Int = 1,
                             target: PlistValue? = nil) -> CaptureEvent {
        var fields: OrderedDictionary<String, PlistValue> = [
            "type": .string("touch"), "phase": .string(phase.rawValue), "x": .real(x), "y": .real(y),
            "tapCount": .integer(Int64(tapCount)), "view": .string(view),
        ]
        fields["target"] = target
        return CaptureEvent(.userInput, fields)
    }

    /// A view came on screen (UserInterfaceEvent `viewDidAppear`), with the navigation stack under it
    /// (its last element is `view`) and, best, a screenshot (PNG or JPEG bytes) for the replay.
    public static func viewAppeared(_ view: String, stack: [String], title: String? = nil, previousView: String? = nil,
                                    transition: String = "push", screenshot: [UInt8]? = nil) -> CaptureEvent {
        var fields: OrderedDictionary<String, PlistValue> = ["type": .string("viewDidAppear"), "transition": .string(transition),
                                                             "view": .string(view)]
        fields["title"] = title.map(PlistValue.string)
        fields["previousView"] = previousView.map(PlistValue.string)
        fields["viewStack"] = .array(stack.map(PlistValue.string))
        fields["screenshot"] = screenshot.map(PlistValue.data)
        return CaptureEvent(.userInterface, fields)
    }

    /// A control's action (UserInterfaceEvent `action`, `touchUpInside`): `action` is the selector it sent.
    public static func buttonPressed(_ title: String?, id: String, view: String, action: String = "buttonPressed:",
                                     className: String = "UIButton") -> CaptureEvent {
        var sender: OrderedDictionary<String, PlistValue> = ["className": .string(className), "id": .string(id)]
        sender["title"] = title.map(PlistValue.string)
        return CaptureEvent(.userInterface, ["type": .string("action"), "event": .string("touchUpInside"),
                                             "action": .string(action), "view": .string(view), "sender": .dict(sender)])
    }

    /// A sensor's reading (DeviceSensorEvent), named as the session's sensor selection names it.
    public static func sensorReading(_ sensor: String, _ values: OrderedDictionary<String, PlistValue>) -> CaptureEvent {
        var fields: OrderedDictionary<String, PlistValue> = ["sensor": .string(sensor)]
        fields.merge(values) { current, _ in current }
        return CaptureEvent(.deviceSensor, fields)
    }

    public enum ImageFormat: String, Sendable {
        case png = "image/png"
        case jpeg = "image/jpeg"
    }

    /// What the screen shows now (UserInterfaceEvent `screenshot`): PNG or JPEG bytes, stored once per content.
    public static func screenshot(_ image: [UInt8], format: ImageFormat, view: String? = nil) -> CaptureEvent {
        var fields: OrderedDictionary<String, PlistValue> = ["type": .string("screenshot"), "contentType": .string(format.rawValue)]
        fields["view"] = view.map(PlistValue.string)
        fields["screenshot"] = .data(image)
        return CaptureEvent(.userInterface, fields)
    }

    public enum Lifecycle: String, Sendable { case launch, background, foreground, terminate }

    /// The app's life (ApplicationEvent): launched (with its id and version), to the background and
    /// back, terminated; the analysis reads the breaks between them.
    public static func application(_ change: Lifecycle, appId: String? = nil, appVersion: String? = nil) -> CaptureEvent {
        var fields: OrderedDictionary<String, PlistValue> = ["type": .string(change.rawValue)]
        fields["appId"] = appId.map(PlistValue.string)
        fields["appVersion"] = appVersion.map(PlistValue.string)
        return CaptureEvent(.application, fields)
    }

    /// An application's own event (CustomEvent): `name` and whatever fields it wants stored.
    public static func custom(_ name: String, _ fields: OrderedDictionary<String, PlistValue> = [:]) -> CaptureEvent {
        var all: OrderedDictionary<String, PlistValue> = ["name": .string(name)]
        all.merge(fields) { current, _ in current }
        return CaptureEvent(.custom, all)
    }

    public enum Marker: String, Sendable { case begin, end }

    /// The thesis's task markers, `[monitor beginEvent: @"Edit blog posting"]`: the analysis measures
    /// the task between a begin and the end of the same name.
    public static func marker(_ kind: Marker, _ name: String) -> CaptureEvent {
        CaptureEvent(.custom, ["name": .string(name), "marker": .string(kind.rawValue),
                               "call": .string("[monitor \(kind.rawValue)Event: @\"\(name)\"]")])
    }
}

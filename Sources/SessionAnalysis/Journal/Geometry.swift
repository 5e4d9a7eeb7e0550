internal import MuEvalWire
public import SessionModel
internal import WireProtocol

extension Point {
    /// The point at `x`, `y` as read from a session file; nil when a coordinate is not plausible.
    public init?(at x: Double, _ y: Double) {
        guard let x = Plausible.coordinate(x), let y = Plausible.coordinate(y) else { return nil }
        self.init(x: x, y: y)
    }
}

/// The UI element an event names (`target`, `sender`): enough to say where something happened.
public struct ElementReference: Hashable, Sendable {
    public var className: String
    public var id: String?
    public var title: String?
    public var frame: Rect?

    /// How the report names it: `UIButton "Publish"`, or the class and id.
    public var label: String {
        if let title, !title.isEmpty { return "\(className) \"\(title)\"" }
        if let id { return "\(className) \(id)" }
        return className
    }
}

extension ElementReference {
    /// The element an event's `target` or `sender` dictionary names; nil without a class name.
    init?(_ value: PlistValue?) {
        guard let value, let className = value["className"]?.string else { return nil }
        self.init(className: className, id: value["id"]?.string, title: value["title"]?.string, frame: value["frame"]?.rect)
    }
}

internal import WireProtocol

/// Screen coordinates in points, as touches and frames are reported.
public struct Point: Hashable, Sendable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    /// The point at `x`, `y` as read from a session file; nil when a coordinate is not plausible.
    init?(at x: Double, _ y: Double) {
        guard let x = Plausible.coordinate(x), let y = Plausible.coordinate(y) else { return nil }
        self.init(x: x, y: y)
    }

    public func distance(to other: Point) -> Double {
        ((x - other.x) * (x - other.x) + (y - other.y) * (y - other.y)).squareRoot()
    }
}

public struct Size: Hashable, Sendable {
    public var width: Double
    public var height: Double

    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }
}

public struct Rect: Hashable, Sendable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}

/// The UI element an event names (`target`, `sender`): enough to say where something happened.
public struct ElementReference: Hashable, Sendable {
    public var className: String
    public var id: String?
    public var title: String?
    public var frame: Rect?

    public init(className: String, id: String? = nil, title: String? = nil, frame: Rect? = nil) {
        self.className = className
        self.id = id
        self.title = title
        self.frame = frame
    }

    init?(_ value: PlistValue?) {
        guard let value, let className = value["className"]?.string else { return nil }
        self.init(className: className, id: value["id"]?.string, title: value["title"]?.string, frame: value["frame"]?.rect)
    }

    /// How the report names it: `UIButton "Publish"`, or the class and id.
    public var label: String {
        if let title, !title.isEmpty { return "\(className) \"\(title)\"" }
        if let id { return "\(className) \(id)" }
        return className
    }
}

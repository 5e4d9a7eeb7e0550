/// Screen geometry in points, as touches, frames and screens are reported: one set of types for what the
/// analysis reads from session files and what the simulator's scenarios lay out.
public struct Point: Hashable, Sendable {
    public var x: Double
    public var y: Double

    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
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

/// A rectangle in points; in JSON (scenario files) it is written `[x, y, width, height]` with a positive size.
public struct Rect: Hashable, Sendable, Codable {
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

    public init(from decoder: Decoder) throws {
        var container = try decoder.unkeyedContainer()
        let values = try (0..<4).map { _ in try container.decode(Double.self) }
        guard container.isAtEnd, values[2] > 0, values[3] > 0 else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a frame is [x, y, width, height] with a positive size")
        }
        self.init(x: values[0], y: values[1], width: values[2], height: values[3])
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(contentsOf: [x, y, width, height])
    }

    /// Whether the point lies inside: the left and top edges are inside, the right and bottom ones are not.
    public func contains(x px: Double, y py: Double) -> Bool {
        px >= x && px < x + width && py >= y && py < y + height
    }
}

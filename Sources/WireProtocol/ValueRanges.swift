public import MuEvalWire
public import OrderedCollections

/// The ranges of the values muevald gives a meaning to (docs/PROTOCOL.md, "Value ranges"), checked
/// once where values come in (the wire decoder, every import reader) and again when a stored value is
/// read (analysis treats a value outside its range as missing). Inside them every later conversion
/// (to `Int` milliseconds or nanoseconds, pixels, sample counts) is finite and cannot overflow.
///
/// Which values have a range, anywhere in an event (top-level or nested, e.g. in a `uiState` tree):
/// - `timestamp` (top level): a time, a `<date>` or a number of seconds since 1970;
/// - `x`, `y`: coordinates, in points;
/// - `width`, `height`: sizes, in points;
/// - `frame` as `[x, y, width, height]`, `path` as `[[x, y], …]`: coordinates and sizes likewise;
/// - `duration`: a duration, in seconds.
/// Only numbers (`<integer>`, `<real>`) are checked: a string under one of these keys is not a
/// number to analysis either. A media chunk's `start` is a time, its `duration` a duration, its
/// `part` a part number; a hello's `screenWidth` and `screenHeight` are sizes, its `screenScale` a scale.
public struct ValueRanges: Sendable, Equatable {
    /// Device times (`timestamp`, a media chunk's `start`), seconds since 1970.
    ///
    /// A fixed calendar window rather than one around the server's clock: a stored file then gets
    /// the same answer whenever it is read (reports are reproducible), a lab machine with a wrong
    /// clock refuses nothing, and a phone whose clock was lost (it restarts at 1970-01-01, the lower
    /// bound) still records events that are right relative to each other, which is all analysis
    /// uses. Up to 2100 any time in nanoseconds fits an `Int64` (it would up to 2262).
    public var times: ClosedRange<Double>
    /// Largest magnitude of a coordinate, and largest size, in points: far beyond any screen or
    /// scrolled content (an 8K display is 7,680 pixels), small enough that times any scale fit an `Int32`.
    public var maxCoordinate: Double
    /// Longest duration, in seconds: a year, so that even a duration an app writes in milliseconds
    /// (a custom event's) fits for hours.
    public var maxDuration: Double
    /// Highest `part` of a media chunk: ten million one-second chunks are 115 days of one stream.
    public var maxMediaPart: Int64

    /// 1970-01-01T00:00:00Z.
    public static let earliestTime: Double = 0
    /// 2100-01-01T00:00:00Z.
    public static let latestTime: Double = 4_102_444_800

    /// The ranges muevald uses unless configured (`limits.*`), and analysis uses for stored files.
    public static let `default` = ValueRanges()

    public init(times: ClosedRange<Double> = earliestTime...latestTime, maxCoordinate: Double = 1_000_000,
                maxDuration: Double = 366 * 86_400, maxMediaPart: Int64 = 10_000_000) {
        self.times = times
        self.maxCoordinate = maxCoordinate
        self.maxDuration = maxDuration
        self.maxMediaPart = maxMediaPart
    }

    // MARK: Single values

    public func isPlausible(time: Double) -> Bool { times.contains(time) }
    public func isPlausible(coordinate: Double) -> Bool { coordinate.isFinite && abs(coordinate) <= maxCoordinate }
    public func isPlausible(size: Double) -> Bool { size >= 0 && size <= maxCoordinate }
    public func isPlausible(duration: Double) -> Bool { duration >= 0 && duration <= maxDuration }
    public func isPlausible(part: Int64) -> Bool { part >= 0 && part <= maxMediaPart }
    /// A screen's pixels per point (`screenScale`): no screen has fewer than a tenth or more than a hundred.
    public func isPlausible(scale: Double) -> Bool { scale >= 0.1 && scale <= 100 }

    /// The value when plausible, else nil (missing): for readers of stored values, as in
    /// `event["x"]?.number.flatMap(ranges.coordinate)`.
    public func time(_ value: Double?) -> Double? { value.flatMap { isPlausible(time: $0) ? $0 : nil } }
    public func coordinate(_ value: Double?) -> Double? { value.flatMap { isPlausible(coordinate: $0) ? $0 : nil } }
    public func size(_ value: Double?) -> Double? { value.flatMap { isPlausible(size: $0) ? $0 : nil } }
    public func duration(_ value: Double?) -> Double? { value.flatMap { isPlausible(duration: $0) ? $0 : nil } }
    public func scale(_ value: Double?) -> Double? { value.flatMap { isPlausible(scale: $0) ? $0 : nil } }

    /// Whether `value` of `quantity` is in its range.
    public func contains(_ value: Double, as quantity: ValueRangeProblem.Quantity) -> Bool {
        switch quantity {
        case .time: isPlausible(time: value)
        case .coordinate: isPlausible(coordinate: value)
        case .size: isPlausible(size: value)
        case .duration: isPlausible(duration: value)
        case .mediaPart: value >= 0 && value <= Double(maxMediaPart)  // the part as a Double: Int64 converts without a trap
        case .scale: isPlausible(scale: value)
        }
    }

    /// What the range of `quantity` is, as an error message says it.
    public func describe(_ quantity: ValueRangeProblem.Quantity) -> String {
        switch quantity {
        case .time: "a time from \(Self.date(times.lowerBound)) to \(Self.date(times.upperBound))"
        case .coordinate: "a coordinate from -\(Self.number(maxCoordinate)) to \(Self.number(maxCoordinate)) points"
        case .size: "a size from 0 to \(Self.number(maxCoordinate)) points"
        case .duration: "a duration from 0 to \(Self.number(maxDuration)) seconds"
        case .mediaPart: "a part number from 0 to \(maxMediaPart)"
        case .scale: "a scale from 0.1 to 100 pixels per point"
        }
    }

    /// The problem with `value` of `quantity` at `field`, or nil when it is in its range.
    public func problem(_ value: Double, as quantity: ValueRangeProblem.Quantity, at field: String) -> ValueRangeProblem? {
        contains(value, as: quantity) ? nil : ValueRangeProblem(field: field, value: value, quantity: quantity, range: describe(quantity))
    }

    /// The problem with an event's `timestamp`, or nil.
    public func problem(timestamp: Double) -> ValueRangeProblem? {
        problem(timestamp, as: .time, at: "timestamp")
    }

    // MARK: Whole values

    /// The first value of an event (its dict, as sent or as stored) outside its range, naming its path
    /// (`uiState.subviews[2].frame.width`); nil when every value is in range.
    public func problem(inEvent event: PlistValue) -> ValueRangeProblem? {
        var check = ValueRangeCheck(ranges: self, tracksPath: true)
        event.emit(into: &check)
        return check.problem
    }

    /// `problem(inEvent:)` for an event's fields.
    public func problem(inEvent fields: OrderedDictionary<String, PlistValue>) -> ValueRangeProblem? {
        problem(inEvent: .dict(fields))
    }

    /// The first of a media chunk's `part`, `start` and `duration` outside its range, or nil.
    public func problem(in media: WireMedia) -> ValueRangeProblem? {
        problem(Double(media.part), as: .mediaPart, at: "part") ?? problem(media.start, as: .time, at: "start")
            ?? media.duration.flatMap { problem($0, as: .duration, at: "duration") }
    }

    /// The first of a hello's screen size and scale outside its range, or nil.
    public func problem(in hello: DeviceHello) -> ValueRangeProblem? {
        problem(screenWidth: hello.screenWidth, screenHeight: hello.screenHeight, screenScale: hello.screenScale)
    }

    /// The first of a device's screen size and scale outside its range, or nil (a hello, a device record read from a file).
    public func problem(screenWidth: Double?, screenHeight: Double?, screenScale: Double?) -> ValueRangeProblem? {
        screenWidth.flatMap { problem($0, as: .size, at: "screenWidth") }
            ?? screenHeight.flatMap { problem($0, as: .size, at: "screenHeight") }
            ?? screenScale.flatMap { problem($0, as: .scale, at: "screenScale") }
    }

    private static func date(_ time: Double) -> String {
        time.isFinite ? DateText.canonical(time) : String(time)
    }

    /// Whole numbers without a fraction, as config/muevald.toml writes them; huge ones with an exponent.
    fileprivate static func number(_ value: Double) -> String {
        if abs(value) < 1e15, let whole = Int64(checked: value), Double(whole) == value { return String(whole) }
        return String(value)
    }
}

/// A value outside its range: which field, what it was, and what its range is.
public struct ValueRangeProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// What a value with a range measures.
    public enum Quantity: String, Sendable, CaseIterable {
        case time, coordinate, size, duration, mediaPart, scale
    }

    /// Where the value is in its event or message, e.g. `timestamp`, `uiState.subviews[2].frame.width`.
    public var field: String
    public var value: Double
    public var quantity: Quantity
    /// The range, in words (`ValueRanges.describe`).
    public var range: String

    public init(field: String, value: Double, quantity: Quantity, range: String) {
        self.field = field
        self.value = value
        self.quantity = quantity
        self.range = range
    }

    /// `"x" is 1e+300, outside its range: a coordinate from -1000000 to 1000000 points`.
    public var description: String {
        "\"\(field)\" is \(ValueRanges.number(value)), outside its range: \(range)"
    }
}

/// Checks values as a `PlistSink` sees them: streamed by the wire decoder alongside the event's typed
/// JSON (no tree, no path: the rare event it refuses is checked again as a tree for the path), or
/// replayed from a tree (`ValueRanges.problem(inEvent:)`). Keeps the first problem.
struct ValueRangeCheck: PlistSink {
    /// What a value means, by its key or its place in an array.
    enum Role {
        case none, timestamp, coordinate, size, duration
        /// `frame` as `[x, y, width, height]`.
        case frame
        /// `path` as `[[x, y], …]`; each of its elements is a `point`.
        case path, point

        /// The role of a dict's value under `key`; `timestamp` only in the event's own dict.
        init(key: UnsafeBufferPointer<UInt8>, topLevel: Bool) {
            switch key.count {
            case 1 where key[0] == 0x78 || key[0] == 0x79: self = .coordinate  // x, y
            case 4 where bytesEqual(key, "path"): self = .path
            case 5 where bytesEqual(key, "width"): self = .size
            case 5 where bytesEqual(key, "frame"): self = .frame
            case 6 where bytesEqual(key, "height"): self = .size
            case 8 where bytesEqual(key, "duration"): self = .duration
            case 9 where topLevel && bytesEqual(key, "timestamp"): self = .timestamp
            default: self = .none
            }
        }

        /// The role of element `index` of an array with this role.
        func element(_ index: Int) -> Role {
            switch self {
            case .frame: index < 2 ? .coordinate : index < 4 ? .size : .none
            case .path: .point
            case .point: index < 2 ? .coordinate : .none
            default: .none
            }
        }

        var quantity: ValueRangeProblem.Quantity? {
            switch self {
            case .timestamp: .time
            case .coordinate: .coordinate
            case .size: .size
            case .duration: .duration
            case .none, .frame, .path, .point: nil
            }
        }
    }

    private enum Level {
        /// A dict, with the role of its latest key's value.
        case dict(Role)
        case array(Role, next: Int)
    }

    private let ranges: ValueRanges
    private let tracksPath: Bool
    private var levels: [Level] = []
    /// Keys and indexes down to the current value, when `tracksPath`.
    private var path: [ParseFailure.Step] = []
    private(set) var problem: ValueRangeProblem?

    init(ranges: ValueRanges, tracksPath: Bool) {
        self.ranges = ranges
        self.tracksPath = tracksPath
    }

    /// Ready for the next message, keeping the storage.
    mutating func reset() {
        levels.removeAll(keepingCapacity: true)
        path.removeAll(keepingCapacity: true)
        problem = nil
    }

    /// The role of the value arriving now, moving an array on to its next element.
    private mutating func nextRole() -> Role {
        switch levels.last {
        case nil: return .none
        case .dict(let role)?: return role
        case .array(let role, let next)?:
            levels[levels.count - 1] = .array(role, next: next + 1)
            if tracksPath { path[path.count - 1] = .index(next) }
            return role.element(next)
        }
    }

    private mutating func check(_ value: Double, _ role: Role) {
        guard problem == nil, let quantity = role.quantity, !ranges.contains(value, as: quantity) else { return }
        problem = ValueRangeProblem(field: tracksPath ? ParseFailure.location(path) : "", value: value, quantity: quantity,
                                    range: ranges.describe(quantity))
    }

    mutating func beginDict() {
        _ = nextRole()
        levels.append(.dict(.none))
        if tracksPath { path.append(.key("")) }
    }

    mutating func key(_ utf8: UnsafeBufferPointer<UInt8>) {
        levels[levels.count - 1] = .dict(Role(key: utf8, topLevel: levels.count == 1))
        if tracksPath { path[path.count - 1] = .key(String(decoding: utf8, as: UTF8.self)) }
    }

    mutating func endDict() {
        levels.removeLast()
        if tracksPath { path.removeLast() }
    }

    mutating func beginArray() {
        levels.append(.array(nextRole(), next: 0))
        if tracksPath { path.append(.index(0)) }
    }

    mutating func endArray() {
        levels.removeLast()
        if tracksPath { path.removeLast() }
    }

    mutating func integer(_ value: Int64) { check(Double(value), nextRole()) }
    mutating func real(_ value: Double) { check(value, nextRole()) }

    mutating func date(_ secondsSince1970: Double) {
        // A date is a number only as the event's time.
        let role = nextRole()
        if role == .timestamp { check(secondsSince1970, role) }
    }

    mutating func string(_ utf8: UnsafeBufferPointer<UInt8>) { _ = nextRole() }
    mutating func bool(_ value: Bool) { _ = nextRole() }
    mutating func data(_ bytes: [UInt8]) { _ = nextRole() }
}

/// How the decoder reads an event: its typed JSON written and its values checked in one pass.
struct CheckedEventSink: PlistSink {
    var json: TypedJSONWriter
    var check: ValueRangeCheck

    mutating func beginDict() { json.beginDict(); check.beginDict() }
    mutating func key(_ utf8: UnsafeBufferPointer<UInt8>) { json.key(utf8); check.key(utf8) }
    mutating func endDict() { json.endDict(); check.endDict() }
    mutating func beginArray() { json.beginArray(); check.beginArray() }
    mutating func endArray() { json.endArray(); check.endArray() }
    mutating func string(_ utf8: UnsafeBufferPointer<UInt8>) { json.string(utf8); check.string(utf8) }
    mutating func integer(_ value: Int64) { json.integer(value); check.integer(value) }
    mutating func real(_ value: Double) { json.real(value); check.real(value) }
    mutating func bool(_ value: Bool) { json.bool(value); check.bool(value) }
    mutating func date(_ secondsSince1970: Double) { json.date(secondsSince1970); check.date(secondsSince1970) }
    mutating func data(_ bytes: [UInt8]) { json.data(bytes); check.data(bytes) }
}

public import SessionModel
internal import MuEvalWire
internal import WireProtocol

/// A finger's way across the screen, from touch-down to lift (touch phases began, moved…, ended).
public struct Stroke: Equatable, Sendable {
    /// The touch-down event.
    public var eventID: Int64
    public var start: Double
    public var end: Double
    public var view: String?
    /// Where the finger went down.
    public var origin: Point
    /// The first point after the touch-down, inline, and the others in `rest`: a tap allocates nothing of its own,
    /// also when the finger lifts a little away. Declared before `isTap`, which then fits in the optional's spare
    /// byte (`Stroke`'s stride stays 96).
    private var next: Point?
    /// Short and still: a tap rather than a gesture.
    public var isTap: Bool
    private var rest: [Point] = []
    /// A reference (8 bytes) where the element inline took about 90, nil or not; `target` reads it.
    var sharedTarget: SharedElement?

    init(eventID: Int64, start: Double, view: String?, origin: Point, target: SharedElement?) {
        self.eventID = eventID
        self.start = start
        end = start
        self.view = view
        self.origin = origin
        isTap = false
        sharedTarget = target
    }

    /// Where the finger went after the touch-down, in order: empty while it stays where it went down.
    public var path: [Point] { next.map { [$0] + rest } ?? [] }
    /// Every point, from the touch-down.
    public var points: [Point] { [origin] + path }

    /// Adds where the finger went next, unless it stayed.
    mutating func extend(to point: Point) {
        guard (rest.last ?? next ?? origin) != point else { return }
        if next == nil { next = point } else { rest.append(point) }
    }

    /// Whether every point is within `radius` of the touch-down.
    func stays(within radius: Double) -> Bool {
        (next.map { $0.distance(to: origin) <= radius } ?? true) && rest.allSatisfy { $0.distance(to: origin) <= radius }
    }
    /// The element under the finger, as the capture library named it.
    public var target: ElementReference? { sharedTarget?.element }
}

/// An element kept once on the heap, shared by the strokes on equal ones (a control is tapped again and again).
final class SharedElement: Equatable, Sendable {
    let element: ElementReference

    init(_ element: ElementReference) {
        self.element = element
    }

    static func == (a: SharedElement, b: SharedElement) -> Bool { a.element == b.element }
}

/// Every stroke of a session, in the order the pass closed them, kept in a `ScratchFile` (issue 41): one per
/// touch-down, they were the analysis's largest result, about 250 bytes each with what the interpreters after
/// it kept per stroke, so a session's memory grew with its touches. The interpreters read them in one
/// sequential pass each (`forEach`), keeping what they report; distinct views and targets, few in any app, are
/// kept in memory and shared by the strokes read back.
public final class Strokes: Sendable, Equatable {
    /// Nil when the session has no stroke.
    private let file: ScratchFile?
    public let count: Int
    private let views: [String]
    private let targets: [SharedElement]

    /// No stroke.
    convenience init() {
        self.init(file: nil, count: 0, views: [], targets: [])
    }

    fileprivate init(file: ScratchFile?, count: Int, views: [String], targets: [SharedElement]) {
        self.file = file
        self.count = count
        self.views = views
        self.targets = targets
    }

    public static func == (lhs: Strokes, rhs: Strokes) -> Bool { lhs === rhs }

    /// Each stroke with its index (0 first), in order.
    public func forEach(_ body: (Int, Stroke) throws -> Void) throws {
        guard var cursor = file?.cursor() else { return }
        for index in 0..<count {
            let id = Int64(bitPattern: try cursor.integer(UInt64.self))
            let start = try cursor.double(), end = try cursor.double()
            let origin = Point(x: try cursor.double(), y: try cursor.double())
            let isTap = try cursor.integer(UInt8.self) == 1
            let view = try StrokeScratch.Tag.read(&cursor, table: views) { try $0.string() }
            let target = try StrokeScratch.Tag.read(&cursor, table: targets) { SharedElement(try StrokeScratch.element(from: &$0)) }
            var stroke = Stroke(eventID: id, start: start, view: view, origin: origin, target: target)
            stroke.end = end
            stroke.isTap = isTap
            for _ in 0..<(try cursor.integer(UInt32.self)) {
                stroke.extend(to: Point(x: try cursor.double(), y: try cursor.double()))
            }
            try body(index, stroke)
        }
    }
}

/// Writes the strokes as the pass closes them. The first stroke makes the file: a session without touches has none.
final class StrokeScratch {
    /// Distinct views and targets kept in memory and written as an index, up to this many each; others are
    /// written out in full (an app with more distinct elements than this is one that names each row anew).
    static let internLimit = 4_096

    private let directory: String
    private var file: ScratchFile?
    private var count = 0
    private var views: [String: UInt32] = [:]
    private var viewList: [String] = []
    private var targets: [ElementReference: UInt32] = [:]
    private var targetList: [SharedElement] = []

    init(directory: String) {
        self.directory = directory
    }

    /// The view's name as kept (its storage shared by every stroke on it); `view` itself once the table is full.
    func interned(_ view: String) -> String {
        if let index = views[view] { return viewList[Int(index)] }
        guard viewList.count < Self.internLimit else { return view }
        views[view] = UInt32(clamping: viewList.count)
        viewList.append(view)
        return view
    }

    /// The element as kept, shared by every stroke on an equal one.
    func shared(_ element: ElementReference) -> SharedElement {
        if let index = targets[element] { return targetList[Int(index)] }
        let shared = SharedElement(element)
        guard targetList.count < Self.internLimit else { return shared }
        targets[element] = UInt32(clamping: targetList.count)
        targetList.append(shared)
        return shared
    }

    func append(_ stroke: Stroke) throws {
        let file = try file ?? ScratchFile(directory: directory, purpose: "strokes")
        self.file = file
        file.append(UInt64(bitPattern: stroke.eventID))
        file.append(stroke.start)
        file.append(stroke.end)
        file.append(stroke.origin.x)
        file.append(stroke.origin.y)
        file.append(stroke.isTap ? 1 as UInt8 : 0)
        try Tag.write(stroke.view, index: stroke.view.flatMap { views[$0] }, to: file) { try file.append($0) }
        try Tag.write(stroke.target, index: stroke.target.flatMap { targets[$0] }, to: file) { try Self.write($0, to: file) }
        let path = stroke.path
        file.append(UInt32(truncatingIfNeeded: path.count))
        for point in path {
            file.append(point.x)
            file.append(point.y)
        }
        try file.recordEnded()
        count += 1
    }

    /// Every stroke appended, to read.
    func finish() throws -> Strokes {
        try file?.flush()
        return Strokes(file: file, count: count, views: viewList, targets: targetList)
    }

    /// A view or target in a record: its index in the kept ones, none, or written out after the tag.
    enum Tag {
        static let none = UInt32.max
        static let inline = UInt32.max - 1

        static func write<Value>(_ value: Value?, index: UInt32?, to file: ScratchFile, _ written: (Value) throws -> Void) throws {
            guard let value else { return file.append(none) }
            if let index { return file.append(index) }
            file.append(inline)
            try written(value)
        }

        static func read<Value>(_ cursor: inout ScratchFile.Cursor, table: [Value], _ inlineValue: (inout ScratchFile.Cursor) throws -> Value) throws -> Value? {
            switch try cursor.integer(UInt32.self) {
            case none: return nil
            case inline: return try inlineValue(&cursor)
            case let index where Int(index) < table.count: return table[Int(index)]
            case let index: throw AnalysisError.notKeptInScratch(cursor.purpose, "index \(index) of \(table.count) kept")
            }
        }
    }

    private static func write(_ element: ElementReference, to file: ScratchFile) throws {
        try file.append(element.className)
        try file.append(element.id)
        try file.append(element.title)
        file.append(element.frame == nil ? 0 as UInt8 : 1)
        if let frame = element.frame {
            for value in [frame.x, frame.y, frame.width, frame.height] { file.append(value) }
        }
    }

    static func element(from cursor: inout ScratchFile.Cursor) throws -> ElementReference {
        let className = try cursor.string(), id = try cursor.optionalString(), title = try cursor.optionalString()
        let frame = try cursor.integer(UInt8.self) == 1
            ? Rect(x: try cursor.double(), y: try cursor.double(), width: try cursor.double(), height: try cursor.double()) : nil
        return ElementReference(className: className, id: id, title: title, frame: frame)
    }
}

/// Joins touch events into strokes. One finger at a time: a touch-down while a stroke is open ends it.
struct StrokeBuilder {
    let options: AnalysisOptions
    private var open: Stroke?
    private let scratch: StrokeScratch

    init(options: AnalysisOptions, directory: String) {
        self.options = options
        scratch = StrokeScratch(directory: directory)
    }

    mutating func add(_ event: JournalEvent) throws {
        guard let x = event["x"]?.number, let y = event["y"]?.number, let point = Point(at: x, y) else { return }
        switch event["phase"]?.string {
        case "began", nil:
            try close()
            open = Stroke(eventID: event.id, start: event.time, view: event.view.map(scratch.interned), origin: point,
                          target: ElementReference(event["target"]).map(scratch.shared))
            if event["phase"] == nil { try close() }
        case "ended", "cancelled":
            extend(with: point, at: event.time)
            try close()
        default:
            extend(with: point, at: event.time)
        }
    }

    private mutating func extend(with point: Point, at time: Double) {
        guard open != nil else { return }
        open!.extend(to: point)
        open!.end = time
    }

    private mutating func close() throws {
        guard var stroke = open else { return }
        open = nil
        stroke.isTap = stroke.stays(within: options.tapSlop) && stroke.end - stroke.start <= options.tapMaxDuration
        try scratch.append(stroke)
    }

    mutating func finish() throws -> Strokes {
        try close()
        return try scratch.finish()
    }
}

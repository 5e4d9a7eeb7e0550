public import MuEvalWire
public import SessionModel
public import WireProtocol

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
    /// also when the finger lifts a little away (the strokes are the largest result on the blackboard, one per
    /// touch-down: heaptrack of a 500,000-touch stop showed 12 MB of two-point paths). Declared before `isTap`,
    /// which then fits in the optional's spare byte (`Stroke`'s stride stays 96).
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

/// A gesture the capture library recognised (`type` gesture): tap, swipe, scroll, drag, pinch…
public struct RecognizedGesture: Equatable, Sendable {
    public var eventID: Int64
    public var time: Double
    public var view: String?
    public var kind: String
    public var recognized: Bool
}

/// A UserInterfaceEvent: the app did something visible (an action, a row selection, a view change).
public struct ScreenUpdate: Equatable, Sendable {
    public var eventID: Int64
    public var time: Double
    public var type: String
    public var view: String?
}

/// A view that appeared, with what the capture library saw of it (thesis 5.2, `MFScreenSensor`).
public struct ViewAppearance: Equatable, Sendable {
    public var eventID: Int64
    public var time: Double
    public var view: String
    public var title: String?
    /// launch, push, modal, pop, dismiss.
    public var transition: String
    /// The navigation stack, root first.
    public var stack: [String]
    public var screenshot: BlobReference?
    /// The UI state tree (thesis Listing 4.2), when the event has one.
    public var uiState: PlistValue?
}

/// A custom event; `marker` begin/end delimit a task (`[monitor beginEvent: @"name"]`).
public struct CustomMarker: Equatable, Sendable {
    /// A task's begin and end (the app's `beginEvent`/`endEvent`, or the tester's own marks), or the tester giving it up.
    public enum Kind: String, Sendable { case begin, end, giveUp }
    public var eventID: Int64
    public var time: Double
    public var name: String
    public var kind: Kind?
    /// The tester set this task mark (`by` = `tester`: the capture library's `beginTask`/`endTask`/`giveUpTask`);
    /// the app's own task events have no `by`.
    public var byTester = false
}

/// An ApplicationEvent: launch, background, foreground, terminate, exception.
public struct LifecycleEvent: Equatable, Sendable {
    public var eventID: Int64
    public var time: Double
    public var type: String
}

/// A screenshot in any interaction event, in the order taken.
public struct ScreenshotTake: Equatable, Sendable {
    public var eventID: Int64
    public var time: Double
    public var view: String?
    public var blob: BlobReference
    /// The screen in points, from the same event's UI state tree.
    public var screen: Size?
}

/// Every interaction event of the session (and the observers' notes) decoded once in the journal's one pass, so
/// that the interpreters after it need not read the journal again. Sensor events are not part of it: they are the bulk of a session and only
/// the timeline shows them.
public struct Interactions: InterpretationResult, Equatable {
    public var strokes: [Stroke] = []
    public var gestures: [RecognizedGesture] = []
    /// Text typed (UserInputEvent `text`).
    public var textEntries: [Double] = []
    public var updates: [ScreenUpdate] = []
    public var appearances: [ViewAppearance] = []
    public var markers: [CustomMarker] = []
    public var lifecycle: [LifecycleEvent] = []
    public var screenshots: [ScreenshotTake] = []
    /// The observers' notes in storage order, their screenshots not yet known (`ObserverNotesInterpreter` adds them).
    public var notes: [NoteEntry] = []
}

public struct InteractionsInterpreter: JournalInterpreter {
    public let name = "Interactions"
    public let produces: [any InterpretationResult.Type] = [Interactions.self]
    let options: AnalysisOptions

    public init(options: AnalysisOptions) {
        self.options = options
    }

    public func makeReader(for journal: SessionJournal) -> any JournalReader { Reader(options: options) }

    final class Reader: JournalReader {
        let eventClasses: Set<String>? = Set([EventClass.userInput, .userInterface, .custom, .application].map(\.rawValue)
                                              + [ObserverNote.eventClass])
        private var result = Interactions()
        private var strokes: StrokeBuilder

        init(options: AnalysisOptions) {
            strokes = StrokeBuilder(options: options)
        }

        func read(_ event: JournalEvent) {
            if event.eventClass == ObserverNote.eventClass {
                if let note = ObserverNote(payload: event.payload) {
                    result.notes.append(NoteEntry(eventID: event.id, time: event.time, note: note))
                }
                return
            }
            let screenshot = event.payload.screenshot
            if let blob = screenshot {
                result.screenshots.append(ScreenshotTake(eventID: event.id, time: event.time, view: event.view, blob: blob,
                                                         screen: event["uiState"]?["frame"]?.rect.map { Size(width: $0.width, height: $0.height) }))
            }
            switch EventClass(rawValue: event.eventClass) {
            case .userInput:
                switch event["type"]?.string {
                case "touch": strokes.add(event)
                case "gesture":
                    result.gestures.append(RecognizedGesture(eventID: event.id, time: event.time, view: event.view,
                                                             kind: event["gesture"]?.string ?? "gesture",
                                                             recognized: event["recognized"]?.bool ?? true))
                case "text": result.textEntries.append(event.time)
                default: break
                }
            case .userInterface:
                let type = event["type"]?.string ?? ""
                result.updates.append(ScreenUpdate(eventID: event.id, time: event.time, type: type, view: event.view))
                if type == "viewDidAppear", let view = event.view {
                    result.appearances.append(ViewAppearance(
                        eventID: event.id, time: event.time, view: view, title: event["title"]?.string,
                        transition: event["transition"]?.string ?? "push",
                        stack: event["viewStack"]?.array?.compactMap(\.string) ?? [view],
                        screenshot: screenshot,
                        uiState: event["uiState"]))
                }
            case .custom:
                if let name = event["name"]?.string {
                    result.markers.append(CustomMarker(eventID: event.id, time: event.time, name: name,
                                                       kind: InteractionsInterpreter.markerKind(event), byTester: event["by"]?.string == "tester"))
                }
            default:
                if let type = event["type"]?.string {
                    result.lifecycle.append(LifecycleEvent(eventID: event.id, time: event.time, type: type))
                }
            }
        }

        func finish(into results: inout ResultStore) {
            result.strokes = strokes.finish()
            results.add(result)
        }
    }

    /// `marker` as the simulator sends it, else the thesis's call (`[monitor beginEvent: @"…"]`).
    static func markerKind(_ event: JournalEvent) -> CustomMarker.Kind? {
        if let marker = event["marker"]?.string { return CustomMarker.Kind(rawValue: marker) }
        guard let call = event["call"]?.string else { return nil }
        return call.contains("beginEvent") ? .begin : call.contains("endEvent") ? .end : nil
    }
}

/// Joins touch events into strokes. One finger at a time: a touch-down while a stroke is open ends it.
struct StrokeBuilder {
    /// Distinct views and targets shared, up to this many each: a view's name decoded anew for every
    /// event is an allocation per stroke once it is longer than a small string (15 bytes).
    static let internLimit = 4_096

    let options: AnalysisOptions
    private var open: Stroke?
    private var done: [Stroke] = []
    private var views: Set<String> = []
    private var targets: [ElementReference: SharedElement] = [:]

    init(options: AnalysisOptions) {
        self.options = options
    }

    mutating func add(_ event: JournalEvent) {
        guard let x = event["x"]?.number, let y = event["y"]?.number, let point = Point(at: x, y) else { return }
        switch event["phase"]?.string {
        case "began", nil:
            close()
            open = Stroke(eventID: event.id, start: event.time, view: interned(event.view), origin: point,
                          target: shared(ElementReference(event["target"])))
            if event["phase"] == nil { close() }
        case "ended", "cancelled":
            extend(with: point, at: event.time)
            close()
        default:
            extend(with: point, at: event.time)
        }
    }

    private mutating func extend(with point: Point, at time: Double) {
        guard open != nil else { return }
        open!.extend(to: point)
        open!.end = time
    }

    /// An equal view name seen before (its storage shared), else `view`, kept while there are few.
    private mutating func interned(_ view: String?) -> String? {
        guard let view else { return nil }
        if let index = views.firstIndex(of: view) { return views[index] }
        if views.count < Self.internLimit { views.insert(view) }
        return view
    }

    private mutating func shared(_ element: ElementReference?) -> SharedElement? {
        guard let element else { return nil }
        if let known = targets[element] { return known }
        let shared = SharedElement(element)
        if targets.count < Self.internLimit { targets[element] = shared }
        return shared
    }

    private mutating func close() {
        guard var stroke = open else { return }
        stroke.isTap = stroke.stays(within: options.tapSlop) && stroke.end - stroke.start <= options.tapMaxDuration
        done.append(stroke)
        open = nil
    }

    mutating func finish() -> [Stroke] {
        close()
        return done
    }
}

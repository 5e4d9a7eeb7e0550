public import MuEvalWire
public import SessionModel
public import WireProtocol

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
    public var strokes = Strokes()
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

    public func makeReader(for journal: SessionJournal) -> any JournalReader {
        Reader(options: options, directory: journal.scratchDirectory)
    }

    final class Reader: JournalReader {
        let eventClasses: Set<String>? = Set([EventClass.userInput, .userInterface, .custom, .application].map(\.rawValue)
                                              + [ObserverNote.eventClass])
        private var result = Interactions()
        private var strokes: StrokeBuilder

        init(options: AnalysisOptions, directory: String) {
            strokes = StrokeBuilder(options: options, directory: directory)
        }

        func read(_ event: JournalEvent) throws {
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
                case "touch": try strokes.add(event)
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

        func finish(into results: inout ResultStore) throws {
            result.strokes = try strokes.finish()
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

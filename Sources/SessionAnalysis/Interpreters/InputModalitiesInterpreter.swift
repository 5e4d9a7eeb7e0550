/// Gestures versus buttons on one view (seed 001 Fig. 3): do users swipe where they could press a button?
public struct ViewInputs: Equatable, Sendable {
    public var view: String
    /// Recognised gestures other than taps, by kind, most frequent first.
    public var gestures: [(kind: String, count: Int)]
    /// Control actions (`touchUpInside` and the like).
    public var buttonPresses: Int
    public var rowSelections: Int
    public var taps: Int

    public var gestureCount: Int { gestures.reduce(0) { $0 + $1.count } }

    public static func == (lhs: ViewInputs, rhs: ViewInputs) -> Bool {
        lhs.view == rhs.view && lhs.buttonPresses == rhs.buttonPresses && lhs.rowSelections == rhs.rowSelections
            && lhs.taps == rhs.taps && lhs.gestures.elementsEqual(rhs.gestures) { $0 == $1 }
    }
}

public struct InputModalities: InterpretationResult, Equatable {
    /// Views in the order they first appear in the session.
    public var views: [ViewInputs]
}

public struct InputModalitiesInterpreter: Interpreter {
    public let name = "Gestures vs buttons"
    public let requires: [any InterpretationResult.Type] = [Interactions.self]
    public let produces: [any InterpretationResult.Type] = [InputModalities.self]

    public func run(on journal: SessionJournal, results: inout ResultStore) throws {
        let interactions = try results.required(Interactions.self)
        var order: [String] = []
        var gestures: [String: [String: Int]] = [:], buttons: [String: Int] = [:], rows: [String: Int] = [:], taps: [String: Int] = [:]
        func note(_ view: String?) -> String? {
            guard let view else { return nil }
            if gestures[view] == nil {
                gestures[view] = [:]
                order.append(view)
            }
            return view
        }
        for appearance in interactions.appearances { _ = note(appearance.view) }
        for gesture in interactions.gestures where gesture.recognized && gesture.kind != "tap" {
            if let view = note(gesture.view) { gestures[view]![gesture.kind, default: 0] += 1 }
        }
        for update in interactions.updates {
            guard let view = note(update.view) else { continue }
            switch update.type {
            case "action": buttons[view, default: 0] += 1
            case "didSelectRow": rows[view, default: 0] += 1
            default: break
            }
        }
        try interactions.strokes.forEach { _, stroke in
            if stroke.isTap, let view = note(stroke.view) { taps[view, default: 0] += 1 }
        }
        results.add(InputModalities(views: order.map { view in
            ViewInputs(view: view,
                       gestures: gestures[view]!.map { (kind: $0.key, count: $0.value) }.sorted { ($0.count, $1.kind) > ($1.count, $0.kind) },
                       buttonPresses: buttons[view] ?? 0, rowSelections: rows[view] ?? 0, taps: taps[view] ?? 0)
        }))
    }
}

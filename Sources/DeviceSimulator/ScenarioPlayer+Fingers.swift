internal import MuEvalWire
internal import SessionModel
internal import WireProtocol

/// What the tester's fingers do: touches and gestures inside elements (or beside them), and text typed into fields.
extension ScenarioPlayer {
    /// A finger down and up inside the element, then what the element does with it.
    mutating func tap(_ element: ElementSpec, row: Int? = nil) {
        if whims.chance(behaviour.misclickRate) {
            missTap()
            clock += random.uniform(0.3...0.9) * behaviour.thinkScale
        }
        let offset = scrolled[top.name]?[element.id] ?? 0
        let rowFrame = row.map { Rect(x: element.frame.x, y: element.frame.y + Double($0) * ScreenRenderer.rowHeight - offset,
                                       width: element.frame.width, height: ScreenRenderer.rowHeight) }
        let point = point(in: rowFrame ?? element.frame)
        touch(at: point, phases: ["began", "ended"], target: element)
        emit(.userInput, gestureFields("tap", path: [point], duration: 0.1, recognized: element.isInteractive, target: element))
        if element.acceptsText {
            emit(.userInterface, ["type": .string("editingDidBegin"), "view": .string(top.name), "sender": describe(element)])
        } else if element.isControl {
            emit(.userInterface, ["type": .string("action"), "event": .string("touchUpInside"),
                                  "action": .string(element.action ?? "buttonPressed:"), "view": .string(top.name), "sender": describe(element)])
        } else if let rows = element.rows {
            let row = Int((point.y - element.frame.y + offset) / ScreenRenderer.rowHeight)
            if row < rows.count {
                emit(.userInterface, ["type": .string("didSelectRow"), "view": .string(top.name), "row": .integer(Int64(row)),
                                      "title": .string(rows[row]), "sender": describe(element)])
            }
        }
    }

    /// A tap where no control is (the background, between elements): the touch is logged and nothing happens.
    mutating func missTap() {
        let width = Double(scenario.deviceModel.width), height = Double(scenario.deviceModel.height)
        var point = (x: 4.0, y: 10.0)  // the status bar: no control is ever there
        for _ in 0..<50 {
            let candidate = (x: snap(random.uniform(0...width - 1)), y: snap(random.uniform(screen.contentTop...height - 1)))
            if screen.element(atX: candidate.x, y: candidate.y)?.isInteractive != true {
                point = candidate
                break
            }
        }
        let target = screen.element(atX: point.x, y: point.y)
        touch(at: point, phases: ["began", "ended"], target: target)
        emit(.userInput, gestureFields("tap", path: [point], duration: 0.1, recognized: false, target: target))
    }

    /// A moving touch inside the element; returns how far the finger moved (the distance, shortened to fit).
    @discardableResult
    mutating func gesture(_ kind: String, on element: ElementSpec, direction: Direction, distance: Double,
                                  duration: Double, recognizer: String, handled: String?) -> Double {
        let frame = element.frame
        let (dx, dy) = direction.vector
        let span = dx != 0 ? frame.width : frame.height
        let moved = min(distance, span * 0.8)
        // Start where the whole movement stays inside the frame.
        let xRange = dx < 0 ? (frame.x + moved)...(frame.x + frame.width - 1) : dx > 0 ? frame.x...(frame.x + frame.width - 1 - moved) : frame.x...(frame.x + frame.width - 1)
        let yRange = dy < 0 ? (frame.y + moved)...(frame.y + frame.height - 1) : dy > 0 ? frame.y...(frame.y + frame.height - 1 - moved) : frame.y...(frame.y + frame.height - 1)
        let start = (x: snap(random.uniform(xRange)), y: snap(random.uniform(yRange)))
        let steps = Int(random.uniform(4...8))
        var path = [start]
        for index in 1...steps {
            let progress = Double(index) / Double(steps)
            // Fingers drift a little across the movement.
            let drift = random.gaussian(sigma: 1.5)
            let x = start.x + dx * moved * progress + (dx == 0 ? drift : 0)
            let y = start.y + dy * moved * progress + (dy == 0 ? drift : 0)
            path.append((x: snap(min(max(x, frame.x), frame.x + frame.width - 1)), y: snap(min(max(y, frame.y), frame.y + frame.height - 1))))
        }
        let began = clock
        for (index, point) in path.enumerated() {
            clock = began + duration * Double(index) / Double(steps)
            emitTouch(point, phase: index == 0 ? "began" : index == steps ? "ended" : "moved", target: element, tapCount: 0)
        }
        var fields = gestureFields(kind, path: path, duration: duration, recognized: true, target: element)
        fields["direction"] = .string(direction.rawValue)
        fields["recognizer"] = .string(recognizer)
        fields["handledAs"] = handled.map(PlistValue.string)
        emit(.userInput, fields)
        return moved
    }

    mutating func scrollBy(_ delta: Double, _ element: ElementSpec) {
        let contentHeight = Double(element.rows?.count ?? 0) * ScreenRenderer.rowHeight
        let limit = max(0, contentHeight - element.frame.height)
        let offset = min(max(0, (scrolled[top.name]?[element.id] ?? 0) + delta), limit)
        scrolled[top.name, default: [:]][element.id] = offset
        emit(.userInterface, ["type": .string("scrollViewDidEndDragging"), "view": .string(top.name), "sender": describe(element),
                              "contentOffset": .dict(["x": .real(0), "y": .real(offset)])])
    }

    /// Text entry, a word at a time as the field's editingChanged notifications coalesce it.
    mutating func type(_ text: String, into element: ElementSpec) {
        var current = typed[top.name]?[element.id] ?? element.text ?? ""
        let words = text.split(separator: " ", omittingEmptySubsequences: false)
        for (index, word) in words.enumerated() {
            let inserted = (index == 0 || current.isEmpty ? "" : " ") + word
            clock += Double(inserted.count) * random.uniform(0.15...0.32)
            current += inserted
            typed[top.name, default: [:]][element.id] = current
            let shown = screen.displayedText(of: element) ?? ""
            emit(.userInput, ["type": .string("text"), "view": .string(top.name), "target": describe(element),
                              "inserted": .string(element.secure == true ? String(repeating: "•", count: inserted.count) : inserted),
                              "text": .string(shown)])
        }
    }

    /// A point well inside the frame: fingers aim at the middle of a control.
    mutating func point(in frame: Rect) -> (x: Double, y: Double) {
        (x: snap(frame.x + frame.width * random.uniform(0.15...0.85)), y: snap(frame.y + frame.height * random.uniform(0.15...0.85)))
    }

    /// Touch coordinates come in half points on a Retina screen.
    func snap(_ value: Double) -> Double { (value * 2).rounded(.down) / 2 }
}

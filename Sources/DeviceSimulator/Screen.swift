internal import MuEvalWire
internal import SessionModel
internal import OrderedCollections
internal import WireProtocol

/// What the phone shows at one moment: the view on top of the navigation stack and the text in its fields.
/// Everything a view change reports (the UI state tree, the screenshot) is a function of it.
struct Screen: Equatable {
    let device: DeviceModel
    let view: ViewSpec
    /// Text typed into fields, by element id.
    let typed: [String: String]

    /// The text an element shows: typed text (bullets for a password), else its initial text.
    func displayedText(of element: ElementSpec) -> String? {
        guard let text = typed[element.id] ?? element.text else { return nil }
        return element.secure == true ? String(repeating: "•", count: text.count) : text
    }

    /// The element under a finger: the frontmost interactive one, else the frontmost of any kind (a label or an
    /// image: touched, but nothing happens), else nil (the bare background).
    func element(atX x: Double, y: Double) -> ElementSpec? {
        let hits = view.elements.reversed().filter { $0.frame.contains(x: x, y: y) }
        return hits.first(where: \.isInteractive) ?? hits.first
    }

    var contentTop: Double { ScreenRenderer.statusBarHeight + (view.title == nil ? 0 : ScreenRenderer.navigationBarHeight) }

    /// The view hierarchy as `-[UIWindow getUIState]` reports it (thesis Listing 4.2): class name, address and
    /// frame of every view, with titles, placeholders and font sizes, descending through `subviews`.
    var uiState: PlistValue {
        let full = Rect(x: 0, y: 0, width: Double(device.width), height: Double(device.height))
        let content = Rect(x: 0, y: contentTop, width: full.width, height: full.height - contentTop)
        let controllerView = node("UIView", frame: content, path: "view", extra: ["viewController": .string(view.name)],
                                  subviews: view.elements.map(elementNode))
        var containers = [node("UINavigationTransitionView", frame: content, path: "transition", subviews: [controllerView])]
        if let title = view.title {
            let bar = Rect(x: 0, y: ScreenRenderer.statusBarHeight, width: full.width, height: ScreenRenderer.navigationBarHeight)
            containers.append(node("UINavigationBar", frame: bar, path: "navigationBar", extra: ["title": .string(title)]))
        }
        let layout = node("UILayoutContainerView", frame: full, path: "layout", subviews: containers)
        return node("UIWindow", frame: full, path: "window", subviews: [layout])
    }

    private func elementNode(_ element: ElementSpec) -> PlistValue {
        var extra: OrderedDictionary<String, PlistValue> = [:]
        extra["title"] = element.title.map(PlistValue.string)
        extra["placeholder"] = element.placeholder.map(PlistValue.string)
        extra["text"] = displayedText(of: element).map(PlistValue.string)
        extra["fontSize"] = element.fontSize.map(PlistValue.real)
        let rows = (element.rows ?? []).enumerated().map { index, title in
            node("UITableViewCell", frame: Rect(x: element.frame.x, y: element.frame.y + Double(index) * ScreenRenderer.rowHeight,
                                                 width: element.frame.width, height: ScreenRenderer.rowHeight),
                 path: "\(element.id)/\(index)", extra: ["title": .string(title)])
        }
        return node(element.class, frame: element.frame, path: element.id, extra: extra, subviews: rows)
    }

    private func node(_ className: String, frame: Rect, path: String, extra: OrderedDictionary<String, PlistValue> = [:],
                      subviews: [PlistValue] = []) -> PlistValue {
        var dict: OrderedDictionary<String, PlistValue> = [
            "address": .integer(Self.address(view.name + "/" + path)),
            "className": .string(className),
            "frame": Self.frameValue(frame),
        ]
        dict.merge(extra) { current, _ in current }
        dict["subviews"] = .array(subviews)
        return .dict(dict)
    }

    /// Keys in the order of the thesis's printout.
    static func frameValue(_ frame: Rect) -> PlistValue {
        .dict(["height": .real(frame.height), "width": .real(frame.width), "x": .real(frame.x), "y": .real(frame.y)])
    }

    /// A plausible, stable heap address (like 97057632) for a view: FNV-1a of its path, 16-byte aligned.
    private static func address(_ path: String) -> Int64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in path.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        return Int64(0x0580_0000 + (hash % 0x0080_0000) & ~0xF)
    }
}

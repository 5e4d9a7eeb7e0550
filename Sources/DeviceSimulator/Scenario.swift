public import SessionModel

/// An app under test and what a tester does with it, as written in a scenario file (docs/SIMULATOR.md).
///
/// The format is JSON so that it is editable by hand and needs no parser of our own: views with their UI
/// elements (frames in points, screen coordinates), and tasks made of steps.
public struct Scenario: Codable, Sendable, Equatable {
    public var name: String
    public var description: String?
    public var app: AppInfo
    /// The simulated phone; an iPhone 4 when absent.
    public var device: DeviceModel?
    /// Where location samples start (latitude, longitude); the lab of the thesis when absent.
    public var location: [Double]?
    /// The root view controller, shown at launch.
    public var initialView: String
    public var views: [ViewSpec]
    public var tasks: [TaskSpec]

    public func view(named name: String) -> ViewSpec? { views.first { $0.name == name } }

    public var deviceModel: DeviceModel { device ?? .iPhone4 }
}

public struct AppInfo: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var version: String
}

public struct DeviceModel: Codable, Sendable, Equatable {
    /// Hardware identifier, as `uname` reports it on iOS (`iPhone3,1`).
    public var model: String
    public var systemVersion: String
    /// The screen in points; screenshots have `width × scale` by `height × scale` pixels.
    public var width: Int
    public var height: Int
    public var scale: Int

    public static let iPhone4 = DeviceModel(model: "iPhone3,1", systemVersion: "4.3", width: 320, height: 480, scale: 2)
}

/// One view controller's screen.
public struct ViewSpec: Codable, Sendable, Equatable {
    /// The view controller's class, as the capture library reports it (`EditPostViewController`).
    public var name: String
    /// The navigation bar's title; no navigation bar when absent.
    public var title: String?
    public var elements: [ElementSpec]

    public func element(_ id: String) -> ElementSpec? { elements.first { $0.id == id } }
}

/// A UI element: a UIKit class with a frame and the texts a tester sees.
public struct ElementSpec: Codable, Sendable, Equatable {
    /// How steps refer to the element; unique within its view.
    public var id: String
    /// The UIKit class (`UIButton`, `UITextField`, `UITableView`, …).
    public var `class`: String
    public var frame: Rect
    public var title: String?
    public var placeholder: String?
    /// Initial text of a text field or view, or a label's text.
    public var text: String?
    /// The action method a control sends (`publish:`), reported with its button presses.
    public var action: String?
    /// Rows of a table view, 44 points each.
    public var rows: [String]?
    /// A password field: typed text is reported as bullets, as a capture library must.
    public var secure: Bool?
    /// The point size of its text (`UIFont.pointSize`), reported in the UI state tree as `fontSize`.
    public var fontSize: Double?

    /// UIControl subclasses: a touch on them sends an action (`sendAction:to:forEvent:`).
    public var isControl: Bool { Self.controlClasses.contains(self.class) }
    public var acceptsText: Bool { self.class == "UITextField" || self.class == "UITextView" || self.class == "UISearchBar" }
    /// Elements a touch does something on; a touch anywhere else "misses every control".
    public var isInteractive: Bool { isControl || acceptsText || self.class == "UITableView" || self.class == "UIScrollView" }

    static let controlClasses: Set<String> = [
        "UIButton", "UINavigationButton", "UISegmentedControl", "UISwitch", "UISlider", "UITextField", "UIPageControl",
    ]
}

/// A tester's task, framed by the developer's `beginEvent:`/`endEvent:` markers.
public struct TaskSpec: Codable, Sendable, Equatable {
    public var name: String
    public var steps: [Step]
}

/// One thing the tester (or the app) does. Which fields matter depends on `do`; see docs/SIMULATOR.md.
public struct Step: Codable, Sendable, Equatable {
    public enum Action: String, Codable, Sendable, CaseIterable {
        case tap, type, swipe, scroll, drag, miss, navigate, custom, wait, rotate, background, exception
        /// The tester thinks aloud: `text` is said (recorded with `muevalsim --think-aloud`, else skipped).
        case say
    }

    public var `do`: Action
    /// The element, by id, in the view on top of the stack.
    public var on: String?
    /// `tap` on a table view: the row touched (from 0); without it the touch lands anywhere in the table.
    public var row: Int?
    /// `type`: the text entered; `say`: what the tester says.
    public var text: String?
    /// `swipe`, `scroll`, `drag`: `left`, `right`, `up` or `down`.
    public var direction: Direction?
    /// `scroll`, `drag`: how far the finger moves, in points.
    public var distance: Double?
    /// Navigation, after a `tap` or on its own (`navigate`): push or present a view, or go back.
    public var push: String?
    public var modal: String?
    public var pop: Bool?
    public var dismiss: Bool?
    /// `custom`: the event's name; `exception`: the exception's name; `swipe`: what the gesture did.
    public var name: String?
    /// `wait`: how long, in seconds; `background`: how long the app stays in the background before it returns.
    public var seconds: Double?
    /// `rotate`: `portrait`, `landscapeLeft`, `landscapeRight` or `portraitUpsideDown`.
    public var orientation: String?

    public init(_ action: Action, on element: String? = nil) {
        self.do = action
        self.on = element
    }

    /// The navigation this step causes, if any.
    var navigation: Navigation? {
        if let push { return .push(push) }
        if let modal { return .modal(modal) }
        if pop == true { return .pop }
        if dismiss == true { return .dismiss }
        return nil
    }
}

public enum Direction: String, Codable, Sendable {
    case left, right, up, down

    /// Unit vector of the finger's movement, in screen coordinates (y grows downwards).
    var vector: (dx: Double, dy: Double) {
        switch self {
        case .left: (-1, 0)
        case .right: (1, 0)
        case .up: (0, -1)
        case .down: (0, 1)
        }
    }
}

enum Navigation: Equatable {
    case push(String), modal(String), pop, dismiss

    /// The view a push or modal goes to.
    var destination: String? {
        switch self {
        case .push(let name), .modal(let name): name
        case .pop, .dismiss: nil
        }
    }

    var transition: String {
        switch self {
        case .push: "push"
        case .modal: "modal"
        case .pop: "pop"
        case .dismiss: "dismiss"
        }
    }
}

import DeviceSimulator
import MuEvalWire
import OrderedCollections
import WireProtocol

extension LoadProfile {
    /// The "one-hour session" as a device sends it: 100,001 events over 3,600 s of device time with
    /// 1,000 different screenshots, in the shape of the report benchmark's synthetic hour
    /// (Sources/SessionAnalysisTestSupport/SyntheticHour.swift): every 3.6 s a view appears with a new
    /// screenshot and UI state tree, is tapped six times and swiped, and the accelerometer fills the rest.
    /// One template per event, in order: one connection sending 100,001 events sends the hour once.
    public static let hour: LoadProfile = {
        let (screenshots, perSlot, slot) = (1_000, 100, 3.6)
        let views = (0..<12).map { "View\($0)Controller" }
        let start = 1_298_155_386.0
        var templates: [EventTemplate] = []
        templates.reserveCapacity(screenshots * perSlot + 1)
        func add(_ eventClass: String, _ time: Double, _ fields: [(String, PlistValue)]) {
            var event: OrderedDictionary<String, PlistValue> = ["class": .string(eventClass), "timestamp": .real(time), "seq": .integer(1)]
            for (key, value) in fields { event[key] = value }
            // Each screenshot differs already; making copies unique would rewrite (and break) its PNG.
            templates.append(EventTemplate(bytes: WireEncoder.event(event), seq: 1, unique: false))
        }
        func touch(_ time: Double, _ x: Double, _ y: Double, _ phase: String, _ view: String) {
            add("UserInputEvent", time, [("type", .string("touch")), ("phase", .string(phase)), ("x", .real(x)), ("y", .real(y)),
                                         ("tapCount", .integer(1)), ("view", .string(view))])
        }
        let button: PlistValue = .dict(["className": .string("UIButton"), "id": .string("ok"), "title": .string("OK"),
                                        "frame": frame(20, 400, 120, 36)])
        let uiState: PlistValue = .dict(["className": .string("UIWindow"), "frame": frame(0, 0, 320, 480), "subviews": .array([
            .dict(["className": .string("UIButton"), "frame": frame(20, 400, 120, 36), "title": .string("OK"), "subviews": .array([])]),
            .dict(["className": .string("UITextField"), "frame": frame(20, 100, 280, 31), "subviews": .array([])]),
            .dict(["className": .string("UILabel"), "frame": frame(20, 60, 280, 21), "title": .string("Hello"), "subviews": .array([])]),
        ])])
        add("ApplicationEvent", start, [("type", .string("launch"))])
        for index in 0..<screenshots {
            let time = start + Double(index) * slot
            let view = views[index % views.count]
            add("UserInterfaceEvent", time, [
                ("type", .string("viewDidAppear")), ("transition", .string(index % 2 == 0 ? "push" : "pop")), ("view", .string(view)),
                ("viewStack", .array(views.prefix(index % views.count + 1).map(PlistValue.string))), ("uiState", uiState),
                ("screenshot", .data(screenshot(index))),
            ])
            for tap in 0..<6 {
                let at = time + 0.5 + Double(tap) * 0.4, x = 40 + Double(tap * 10)
                touch(at, x, 410, "began", view)
                touch(at + 0.1, x, 410, "ended", view)
                add("UserInterfaceEvent", at + 0.1, [("type", .string("action")), ("event", .string("touchUpInside")),
                                                      ("action", .string("buttonPressed:")), ("view", .string(view)), ("sender", button)])
            }
            let path: [(Double, Double)] = [(300, 200), (250, 200), (200, 201), (150, 200)]
            for (step, point) in path.enumerated() {
                touch(time + 3 + 0.2 * Double(step) / 3, point.0, point.1, step == 0 ? "began" : step == 3 ? "ended" : "moved", view)
            }
            add("UserInputEvent", time + 3.2, [("type", .string("gesture")), ("gesture", .string("swipe")), ("view", .string(view)),
                                               ("recognized", .bool(true)), ("path", .array(path.map { .array([.real($0.0), .real($0.1)]) }))])
            let written = 1 + 6 * 3 + 5
            for sample in 0..<(perSlot - written) {
                add("DeviceSensorEvent", time + slot * Double(sample) / Double(perSlot), [
                    ("sensor", .string("accelerometer")), ("x", .real(0.01)), ("y", .real(-0.98)), ("z", .real(0.1)),
                ])
            }
        }
        return LoadProfile(name: "hour", templates: templates, summary: String(
            format: "a one-hour session: %d events in 3,600 s of device time, %d different 640 × 960 screenshots",
            templates.count, screenshots))
    }()

    private static func frame(_ x: Double, _ y: Double, _ width: Double, _ height: Double) -> PlistValue {
        .dict(["height": .real(height), "width": .real(width), "x": .real(x), "y": .real(y)])
    }

    /// A 640 × 960 palette PNG (the simulated phone's pixels) with stripes that vary with `index` and the
    /// index in binary along the top: no two alike, a few KB each, as a wireframe screen would be.
    private static func screenshot(_ index: Int) -> [UInt8] {
        let (width, height) = (640, 960)
        var pixels = [UInt8](repeating: 0, count: width * height)
        for row in 0..<height where (row / 32 + index) % 3 == 0 || row / 32 == index % 30 {
            let colour = UInt8(1 + (row / 32 + index) % 3)
            for column in 0..<width { pixels[row * width + column] = colour }
        }
        for bit in 0..<16 where index >> bit & 1 == 1 {
            for row in 0..<16 { for column in bit * 32..<bit * 32 + 32 { pixels[row * width + column] = 2 } }
        }
        let palette = [PNGEncoder.RGB(250, 250, 250), PNGEncoder.RGB(60, 110, 200), PNGEncoder.RGB(200, 60, 60),
                       PNGEncoder.RGB(40, 160, 90)]
        return PNGEncoder.encode(width: width, height: height, palette: palette, pixels: pixels)
    }
}

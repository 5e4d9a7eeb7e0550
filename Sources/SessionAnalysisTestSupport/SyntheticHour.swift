internal import DeviceSimulator
internal import MuEvalWire
public import SessionModel
internal import WireProtocol

/// A dense one-hour session for the benchmark (issue 7: about 100,000 events and 1,000 screenshots):
/// every `seconds / screenshots` a view appears with a new screenshot and UI state tree, is tapped and
/// swiped, and the accelerometer fills the rest. Every screenshot differs, the worst case for the report.
public enum SyntheticHour {
    /// With `study`, the session is that study's (its context in the file) and the app marks each of its tasks:
    /// task k begins in the k-th n-th of the hour and ends 5 + (`variant` + k) % 10 screens later, except that
    /// every fifth variant never ends its last task.
    public static func write(to path: String, events: Int = 100_000, screenshots: Int = 1_000,
                             seconds: Double = 3_600, name: String = "synthetic hour", testUser: String? = "Jack",
                             study: StudyContext? = nil, variant: Int = 0) async throws {
        let builder = try JournalBuilder(path: path, name: name, testUser: testUser, studyContext: study)
        let tasks = study?.tasks.map(\.name) ?? []
        var marks: [Int: [(kind: String, task: String)]] = [:]
        for (number, task) in tasks.enumerated() {
            let begin = number * screenshots / tasks.count + 1
            marks[begin, default: []].append(("begin", task))
            if number < tasks.count - 1 || variant % 5 != 4 {
                marks[begin + 5 + (variant + number) % 10, default: []].append(("end", task))
            }
        }
        let views = (0..<12).map { "View\($0)Controller" }
        let slot = seconds / Double(screenshots)
        let perSlot = events / screenshots
        let start = SimulatedSession.epoch
        builder.application(at: start, "launch")
        for index in 0..<screenshots {
            let time = start + Double(index) * slot
            let view = views[index % views.count]
            let button = JournalBuilder.element("UIButton", id: "ok", frame: [20, 400, 120, 36], title: "OK")
            builder.viewDidAppear(at: time, view: view, transition: index % 2 == 0 ? "push" : "pop",
                                  stack: Array(views.prefix(index % views.count + 1)), screenshot: screenshot(index),
                                  uiState: uiState())
            var written = 1
            for mark in marks[index] ?? [] {
                builder.marker(at: time + 0.2, mark.kind, task: mark.task)
                written += 1
            }
            for tap in 0..<6 {
                let at = time + 0.5 + Double(tap) * 0.4
                builder.tap(at: at, x: 40 + Double(tap * 10), y: 410, view: view, target: button)
                builder.action(at: at + 0.1, view: view, sender: button)
                written += 3
            }
            builder.swipe(at: time + 3, points: [(300, 200), (250, 200), (200, 201), (150, 200)], duration: 0.2, view: view)
            written += 5
            for sample in 0..<max(0, perSlot - written) {
                builder.accelerometer(at: time + slot * Double(sample) / Double(perSlot), x: 0.01, y: -0.98, z: 0.1)
            }
            if index % 50 == 49 { try await builder.commit() }
        }
        try await builder.finish()
    }

    /// A 160 × 240 palette image with stripes that vary with `index`.
    static func screenshot(_ index: Int) -> [UInt8] {
        let width = 160, height = 240
        var pixels = [UInt8](repeating: 0, count: width * height)
        for row in 0..<height where (row / 8 + index) % 3 == 0 || row / 8 == index % 30 {
            for column in 0..<width { pixels[row * width + column] = UInt8(1 + (row / 8 + index) % 3) }
        }
        // The index in binary along the top row, 8 pixels per bit: no two screenshots are the same.
        for bit in 0..<16 where index >> bit & 1 == 1 {
            for column in bit * 8..<bit * 8 + 8 { pixels[column] = 2 }
        }
        let palette = [PNGEncoder.RGB(250, 250, 250), PNGEncoder.RGB(60, 110, 200), PNGEncoder.RGB(200, 60, 60),
                       PNGEncoder.RGB(40, 160, 90)]
        return PNGEncoder.encode(width: width, height: height, palette: palette, pixels: pixels)
    }

    static func uiState() -> PlistValue {
        JournalBuilder.node("UIWindow", frame: [0, 0, 320, 480], subviews: [
            JournalBuilder.node("UIButton", frame: [20, 400, 120, 36], title: "OK"),
            JournalBuilder.node("UITextField", frame: [20, 100, 280, 31]),
            JournalBuilder.node("UILabel", frame: [20, 60, 280, 21], title: "Hello"),
        ])
    }
}

import MuEvalCapture

/// The study's tasks on the phone's screen, here a terminal: each task with its instructions and the time left,
/// and the tester's own marks from what they type (b begin, e done, g give up). An app shows the same in its UI;
/// the library records the marks (`beginTask`, `endTask`, `giveUpTask`) and the analysis measures by them.
struct TaskGuide {
    let capture: CaptureManager
    /// Seconds to wait for the server's welcome.
    let wait: Double
    /// What the app does when the tester writes a note.
    let writeNote: (Int) -> Void

    func run() async {
        print("plainnote: waiting for the study's tasks…")
        guard let study = await capture.waitForStudyTasks(timeout: wait) else {
            print("plainnote: no tasks came from the server within \(wait) s"
                  + (capture.statistics?.lastProblem.map { " (\($0))" } ?? ""))
            return
        }
        if study.tasks.isEmpty { print("plainnote: this session has no tasks") }
        var notes = 0
        tasks: for (index, task) in study.tasks.enumerated() {
            print("\nTask \(index + 1) of \(study.tasks.count): \(task.name)")
            if let instructions = task.instructions { print("  \(instructions)") }
            if let limit = task.timeLimit { print("  Time limit: \(Self.clock(limit))") }
            switch Self.ask("[b] begin  [s] skip  [q] quit", allowed: ["b", "s", "q"]) {
            case "b": break
            case "s": continue tasks
            default: break tasks
            }
            mark { try capture.beginTask(task.name) }
            let started = ContinuousClock.now
            let left = { () -> String in
                guard let limit = task.timeLimit else { return "" }
                let remaining = limit - Self.seconds(ContinuousClock.now - started)
                return remaining > 0 ? " (\(Self.clock(remaining)) left)" : " (time is up)"
            }
            // Said once when the time runs out, whatever the tester is typing.
            let alarm = task.timeLimit.map { limit in
                Task {
                    try await Task.sleep(for: .seconds(limit))
                    print("\nTime is up for \"\(task.name)\": [e] done or [g] give up")
                }
            }
            defer { alarm?.cancel() }
            while true {
                switch Self.ask("\(task.name)\(left()): [n] write a note  [e] done  [g] give up  [q] quit", allowed: ["n", "e", "g", "q"]) {
                case "n":
                    notes += 1
                    writeNote(notes)
                    print("  note \(notes) saved")
                case "e":
                    mark { try capture.endTask(task.name) }
                    continue tasks
                case "g":
                    mark { try capture.giveUpTask(task.name) }
                    continue tasks
                default:
                    // The app closed mid-task: the task stays without an end.
                    break tasks
                }
            }
        }
        if let questionnaire = study.questionnaire {
            print("\nThank you! Please answer a few questions about the app: \(questionnaire)")
        }
    }

    private func mark(_ call: () throws -> Void) {
        do { try call() } catch { print("plainnote: \(error)") }
    }

    /// The tester's choice: the first letter of a line, asked again until it is one of `allowed`; "q" at the end of input.
    private static func ask(_ prompt: String, allowed: Set<String>) -> String {
        while true {
            print("\(prompt)\n> ", terminator: "")
            guard let line = readLine() else { return "q" }
            let choice = String(line.trimmingPrefix(while: \.isWhitespace).prefix(1)).lowercased()
            if allowed.contains(choice) { return choice }
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// m:ss.
    private static func clock(_ seconds: Double) -> String {
        // Non-trapping: the limit is the server's; a day at most.
        let whole = Int(exactly: min(max(seconds, 0), 86_400).rounded(.up)) ?? 0
        let tens = whole % 60 < 10 ? "0" : ""
        return "\(whole / 60):\(tens)\(whole % 60)"
    }
}

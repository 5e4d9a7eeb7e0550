internal import SessionAnalysis
internal import SessionModel
internal import WireProtocol

/// What a task attempt needs of a session's first run of the task, measured while the session's
/// analysis is at hand (docs/STUDIES.md, "Attempts").
struct RunMeasure: Sendable, Equatable, Codable {
    var span: TaskSpan
    var derived: TaskOutcome
    var reason: String
    /// The observer's latest verdict on the task in this session.
    var verdict: TaskOutcome?
    /// Taps that nothing took: tap gestures the capture library reports as not recognised, or, in a
    /// session without tap gesture events, taps whose target is nil (the finger touched no element).
    var misclicks: Int
    /// Taps the unresponsive-tap detector counts.
    var unresponsiveTaps: Int
    var views: [String]
    var extraViews: Int?
    var backtracks: Int

    /// `unresponsive`: indexes into `interactions.strokes`, in order (`UnresponsiveTapDetector.unresponsiveTaps`).
    /// A run without an end is measured until `measuredUntil` (the session's next run), else to the session's end.
    init(_ span: TaskSpan, of task: StudyTask, measuredUntil: Double?, interactions: Interactions, unresponsive: [Int],
         verdict: TaskOutcome?) {
        self.span = span
        (derived, reason) = Self.derive(span, of: task, interactions: interactions)
        self.verdict = verdict
        let span = TaskSpan(task: span.task, start: span.start, end: span.end ?? measuredUntil)
        let taps = interactions.strokes.lazy.filter { $0.isTap && span.contains($0.start) }
        let tapGestures = interactions.gestures.filter { $0.kind == "tap" }
        misclicks = tapGestures.isEmpty ? taps.count { $0.target == nil } : tapGestures.count { !$0.recognized && span.contains($0.time) }
        unresponsiveTaps = unresponsive.count { interactions.strokes[$0].isTap && span.contains(interactions.strokes[$0].start) }
        let appearances = interactions.appearances.filter { span.contains($0.time) }
        views = appearances.map(\.view)
        extraViews = task.expectedPath.isEmpty ? nil : views.count - PathDeviation.longestCommonSubsequence(views, task.expectedPath)
        backtracks = appearances.count { PathDeviation.backTransitions.contains($0.transition) }
    }

    /// The outcome from the tester's give-up mark, the task's end, time limit and success criterion, with the reason.
    static func derive(_ span: TaskSpan, of task: StudyTask, interactions: Interactions) -> (TaskOutcome, String) {
        // The tester said so: whatever the app's events show.
        if span.gaveUp { return (.abandoned, "gave up") }
        guard let end = span.end else { return (.abandoned, "no end") }
        if let limit = task.timeLimit, end - span.start > limit {
            return (.failure, "over the \(ExportNumber.text(limit)) s limit")
        }
        switch task.success {
        case .event(let name):
            // Task begin/end markers delimit runs; they are not the goal.
            let seen = interactions.markers.contains { $0.kind == nil && $0.name == name && span.contains($0.time) }
            return seen ? (.success, "custom event \(name)") : (.failure, "no custom event \(name)")
        case .view(let name):
            let seen = interactions.appearances.contains { $0.view == name && span.contains($0.time) }
            return seen ? (.success, "view \(name) appeared") : (.failure, "view \(name) did not appear")
        case .observer:
            return (.failure, "no observer verdict")
        }
    }

    /// The outcome after the verdict, and the reason a reader sees.
    var outcome: (outcome: TaskOutcome, reason: String) {
        guard let verdict else { return (derived, reason) }
        return (verdict, "observer: \(verdict.rawValue) (derived \(derived.rawValue): \(reason))")
    }
}

/// How far an attempt strayed from the task's expected path.
enum PathDeviation {
    /// Transitions that go back.
    static let backTransitions: Set<String> = ["pop", "dismiss"]

    /// Length of the longest common subsequence (dynamic programming over one row).
    static func longestCommonSubsequence(_ a: [String], _ b: [String]) -> Int {
        var row = [Int](repeating: 0, count: b.count + 1)
        for x in a {
            var diagonal = 0
            for (j, y) in b.enumerated() {
                let above = row[j + 1]
                row[j + 1] = x == y ? diagonal + 1 : max(row[j], above)
                diagonal = above
            }
        }
        return row[b.count]
    }
}

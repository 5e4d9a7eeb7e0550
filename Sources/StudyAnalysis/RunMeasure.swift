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

    /// `taps`: the run's taps on no element and the unresponsive ones, counted in `measured` (`Taps.count`).
    init(_ span: TaskSpan, of task: StudyTask, measured: TaskSpan, taps: Taps, interactions: Interactions, verdict: TaskOutcome?) {
        self.span = span
        (derived, reason) = Self.derive(span, of: task, interactions: interactions)
        self.verdict = verdict
        let tapGestures = interactions.gestures.filter { $0.kind == "tap" }
        misclicks = tapGestures.isEmpty ? taps.untargeted : tapGestures.count { !$0.recognized && measured.contains($0.time) }
        unresponsiveTaps = taps.unresponsive
        let appearances = interactions.appearances.filter { measured.contains($0.time) }
        views = appearances.map(\.view)
        extraViews = task.expectedPath.isEmpty ? nil : views.count - PathDeviation.longestCommonSubsequence(views, task.expectedPath)
        backtracks = appearances.count { PathDeviation.backTransitions.contains($0.transition) }
    }

    /// A run without an end is measured until `next` (the session's next run), else to the session's end.
    static func measured(_ span: TaskSpan, until next: Double?) -> TaskSpan {
        TaskSpan(task: span.task, start: span.start, end: span.end ?? next)
    }

    /// A run's taps that touched no element, and those the unresponsive-tap detector counts.
    struct Taps {
        var untargeted = 0
        var unresponsive = 0

        /// Each span's, counted in one pass over the session's strokes (issue 41: they are not in memory).
        static func count(in spans: [TaskSpan], results: ResultStore, options: AnalysisOptions) throws -> [Taps] {
            var taps = Array(repeating: Taps(), count: spans.count)
            try UnresponsiveTapDetector.forEachTap(in: results, options: options) { tap, unresponsive in
                let untargeted = tap.target == nil
                guard untargeted || unresponsive else { return }
                for index in spans.indices where spans[index].contains(tap.start) {
                    if untargeted { taps[index].untargeted += 1 }
                    if unresponsive { taps[index].unresponsive += 1 }
                }
            }
            return taps
        }
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

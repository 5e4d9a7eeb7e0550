internal import SessionModel

/// Each participant's attempt at each task in each iteration: the earliest first run among their
/// sessions of the iteration, with the SEQ answer and the problems hit during it.
struct AttemptAssembly {
    let attempts: [TaskAttempt]

    init(study: Study, digests: [SessionDigest], responses: StudyResponses, problems: [ProblemGroup]) {
        let seq = AttemptKey.latestRatings(responses.seq)
        // Who did what: sessions grouped by iteration and participant, in session order.
        var groups: [Participation: [SessionDigest]] = [:]
        for digest in digests {
            groups[Participation(iteration: digest.session.iteration, participant: digest.session.participant), default: []].append(digest)
        }
        var attempts: [TaskAttempt] = []
        for participation in groups.keys.sorted() {
            let sessions = groups[participation]!
            for task in study.tasks {
                let runs = sessions.compactMap { digest in digest.firstRuns[task.name].map { (session: digest.session.id, run: $0) } }
                guard let first = runs.min(by: { $0.run.span.start < $1.run.span.start }) else { continue }
                let (session, run) = first
                let (outcome, reason) = run.outcome
                let hit = problems.filter { group in
                    group.sightings.contains { $0.session == session && run.span.contains($0.time) }
                }
                var attempt = TaskAttempt(
                    session: session, iteration: participation.iteration, participant: participation.participant, task: task.name,
                    start: run.span.start, end: run.span.end, outcome: outcome, derivedOutcome: run.derived,
                    overridden: run.verdict != nil, reason: reason,
                    seq: seq[AttemptKey(iteration: participation.iteration, participant: participation.participant, task: task.name)],
                    misclicks: run.misclicks, unresponsiveTaps: run.unresponsiveTaps, views: run.views, extraViews: run.extraViews,
                    backtracks: run.backtracks, problems: hit.map(\.id),
                    runs: sessions.reduce(0) { $0 + ($1.runCounts[task.name] ?? 0) })
                attempt.markedBy = run.span.markedBy.sorted()
                attempt.quotes = sessions.first { $0.session.id == session }?.quotes.filter { run.span.contains($0.start) } ?? []
                attempts.append(attempt)
            }
        }
        self.attempts = attempts
    }
}

/// One participant in one iteration.
struct Participation: Hashable, Comparable {
    var iteration: Int
    var participant: String

    static func < (a: Participation, b: Participation) -> Bool {
        (a.iteration, a.participant) < (b.iteration, b.participant)
    }
}

/// One participant's task in one iteration: where an attempt, an SEQ answer and an export row meet.
struct AttemptKey: Hashable {
    var iteration: Int
    var participant: String
    var task: String

    /// Each participant's latest answer per task and iteration.
    static func latestRatings(_ responses: [SEQResponse]) -> [AttemptKey: Int] {
        var latest: [AttemptKey: SEQResponse] = [:]
        for response in responses {
            let key = AttemptKey(iteration: response.iteration, participant: response.participant, task: response.task)
            if let known = latest[key], known.recorded > response.recorded { continue }
            latest[key] = response
        }
        return latest.mapValues(\.rating)
    }
}

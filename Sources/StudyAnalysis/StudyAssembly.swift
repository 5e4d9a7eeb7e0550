internal import SessionAnalysis
internal import SessionModel
internal import StudyMetrics
internal import WireProtocol

/// Puts the session digests of a study together into its results (docs/STUDIES.md): attempts,
/// problems, numbers per task and iteration, SUS, heatmaps and notes.
struct StudyAssembly {
    let study: Study
    let digests: [SessionDigest]
    let responses: StudyResponses
    /// The iteration asked for, if one was.
    let only: Int?

    var results: StudyResults {
        let numbers = iterationNumbers
        let problems = ProblemGrouping(digests: digests).groups
        let attempts = AttemptAssembly(study: study, digests: digests, responses: responses, problems: problems).attempts
        let statistics = TaskStatistics(tasks: study.tasks.map(\.name), iterations: numbers, attempts: attempts)
        let kept = Set(numbers)
        return StudyResults(
            study: study, iterations: numbers.map(iterationResult), sessions: digests.map(\.session), attempts: attempts,
            taskMetrics: statistics.metrics, comparisons: statistics.comparisons, problems: problems, heatmaps: heatmaps,
            notes: notes,
            responses: StudyResponses(sus: responses.sus.filter { kept.contains($0.iteration) },
                                      seq: responses.seq.filter { kept.contains($0.iteration) },
                                      answers: responses.answers.filter { kept.contains($0.iteration) }))
    }

    /// The study's iterations and any its sessions name, in order; only the one asked for when one was.
    var iterationNumbers: [Int] {
        let all = Set(study.iterations.map(\.number) + digests.map(\.session.iteration))
        return all.filter { only == nil || $0 == only }.sorted()
    }

    func iterationResult(_ number: Int) -> IterationResult {
        var participants = Set(digests.filter { $0.session.iteration == number }.map(\.session.participant))
        participants.formUnion(responses.sus.filter { $0.iteration == number }.map(\.participant))
        participants.formUnion(responses.seq.filter { $0.iteration == number }.map(\.participant))
        participants.formUnion(responses.answers.filter { $0.iteration == number }.map(\.participant))
        let scores = susScores(number)
        let values = scores.keys.sorted().map { scores[$0]! }
        let sus: Estimate? = MeanEstimate.tInterval(values, bounds: 0...100)
        // The iteration before in the whole study, also when only this one is analysed: SUS needs no session.
        let previous = Set(study.iterations.map(\.number) + responses.sus.map(\.iteration)).filter { $0 < number }.max()
        let change: Difference? = previous.flatMap { previous in
            let before = susScores(previous)
            return Comparison.means(before.keys.sorted().map { before[$0]! }, values)
        }
        return IterationResult(number: number, label: study.iteration(number)?.label, participants: participants.sorted(),
                               susScores: scores, sus: sus, grade: sus.flatMap { SUSGrade(score: $0.value) }, susChange: change)
    }

    /// Each participant's SUS score in an iteration, from their latest answers.
    func susScores(_ iteration: Int) -> [String: Double] {
        var latest: [String: SUSResponse] = [:]
        for response in responses.sus where response.iteration == iteration {
            if let known = latest[response.participant], known.recorded > response.recorded { continue }
            latest[response.participant] = response
        }
        return latest.compactMapValues { SUS.score($0.items) }
    }

    /// Per iteration and view: everyone's touches (participant nil), then each participant's.
    var heatmaps: [ViewHeatmap] {
        struct Key: Hashable, Comparable {
            var iteration: Int
            var view: String
            var participant: String?
            /// Everyone's map (no participant: "") before the participants' own.
            static func < (a: Key, b: Key) -> Bool {
                (a.iteration, a.view, a.participant ?? "") < (b.iteration, b.view, b.participant ?? "")
            }
        }
        var maps: [Key: ViewHeatmap] = [:]
        for digest in digests {
            for touches in digest.touches {
                for participant in [nil, digest.session.participant] {
                    let key = Key(iteration: digest.session.iteration, view: touches.view, participant: participant)
                    maps[key, default: ViewHeatmap(iteration: key.iteration, view: key.view, participant: participant,
                                                   screenshot: touches.screenshot, points: [])].points += touches.points
                }
            }
        }
        return maps.keys.sorted().map { maps[$0]! }
    }

    /// Every ordinary note (not a task mark), in session order and time, with the task it was taken during.
    var notes: [StudyNote] {
        digests.flatMap { digest in
            digest.notes.map { entry in
                StudyNote(session: digest.session.id, iteration: digest.session.iteration, participant: digest.session.participant,
                          task: digest.task(at: entry.time), time: entry.time, note: entry.note)
            }
        }
    }
}

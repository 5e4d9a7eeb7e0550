internal import StudyMetrics
internal import WireProtocol

/// The numbers per task and iteration, and each iteration against the one before (docs/STUDIES.md).
struct TaskStatistics {
    let metrics: [TaskMetrics]
    let comparisons: [TaskComparison]

    init(tasks: [String], iterations: [Int], attempts: [TaskAttempt]) {
        var byTask: [Cell: [TaskAttempt]] = [:]
        for attempt in attempts {
            byTask[Cell(task: attempt.task, iteration: attempt.iteration), default: []].append(attempt)
        }
        var metrics: [TaskMetrics] = []
        var comparisons: [TaskComparison] = []
        for task in tasks {
            for (index, iteration) in iterations.enumerated() {
                let sample = Sample(byTask[Cell(task: task, iteration: iteration)] ?? [])
                metrics.append(sample.metrics(task: task, iteration: iteration))
                guard index > 0 else { continue }
                let before = Sample(byTask[Cell(task: task, iteration: iterations[index - 1])] ?? [])
                comparisons.append(sample.compared(to: before, task: task, from: iterations[index - 1], to: iteration))
            }
        }
        self.metrics = metrics
        self.comparisons = comparisons
    }

    private struct Cell: Hashable {
        var task: String
        var iteration: Int
    }

    /// The attempts at one task in one iteration, as the metrics take them.
    private struct Sample {
        var attempts: [TaskAttempt]
        /// Successes only: assisted is not a success.
        var successes: Int
        /// Time on task of the successful attempts.
        var times: [Double]
        var seq: [Double]

        init(_ attempts: [TaskAttempt]) {
            self.attempts = attempts
            let successful = attempts.filter { $0.outcome == .success }
            successes = successful.count
            times = successful.compactMap(\.duration)
            seq = attempts.compactMap { $0.seq.map(Double.init) }
        }

        func metrics(task: String, iteration: Int) -> TaskMetrics {
            let completion: Estimate? = attempts.isEmpty ? nil : CompletionRate.adjustedWald(successes: successes, trials: attempts.count)
            let time: Estimate? = times.isEmpty ? nil : TimeOnTask.geometricMean(times)
            let seqEstimate: Estimate? = seq.isEmpty ? nil : MeanEstimate.tInterval(seq, bounds: 1...7)
            let extraViews = attempts.compactMap(\.extraViews).map(Double.init)
            return TaskMetrics(
                task: task, iteration: iteration, attempts: attempts.count, successes: successes, completion: completion, time: time,
                seq: seqEstimate, misclicks: mean(attempts.map { Double($0.misclicks) }),
                unresponsiveTaps: mean(attempts.map { Double($0.unresponsiveTaps) }),
                extraViews: extraViews.isEmpty ? nil : mean(extraViews), backtracks: mean(attempts.map { Double($0.backtracks) }),
                problemsHit: Set(attempts.flatMap(\.problems)).count)
        }

        func compared(to before: Sample, task: String, from: Int, to: Int) -> TaskComparison {
            let completion: Difference? = before.attempts.isEmpty || attempts.isEmpty ? nil
                : Comparison.completionRates(successesA: before.successes, trialsA: before.attempts.count,
                                             successesB: successes, trialsB: attempts.count)
            let time: Difference? = Comparison.timeRatio(before.times, times)
            let seq: Difference? = Comparison.means(before.seq, self.seq)
            return TaskComparison(task: task, from: from, to: to, completion: completion, time: time, seq: seq)
        }

        /// 0 without attempts: the field is not optional.
        private func mean(_ values: [Double]) -> Double {
            values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count)
        }
    }
}

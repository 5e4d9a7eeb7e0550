internal import SessionModel
internal import StudyMetrics
internal import WireProtocol

/// `muevalctl study export NAME --format csv`: one row per participant × task × iteration in which the
/// participant recorded a session, RFC 4180 (fields with a comma, quote or line break quoted, quotes
/// doubled; lines end in CRLF). Numbers use `.` for decimals and no thousands separators; an empty
/// field means none. docs/STUDIES-export.md documents the same columns.
///
/// Columns:
/// - `study`: the study's name.
/// - `iteration`, `iteration_label`: the iteration's number and label.
/// - `participant`: the participant's code; `attributes`: their attributes as `key=value;key=value`, keys sorted.
/// - `task`: the task's name.
/// - `session`: the id of the session that holds the attempt (the first run); `runs`: runs of the task in the
///   participant's sessions of the iteration.
/// - `outcome`: success, failure, abandoned, assisted, or `not attempted` (the task was never begun: every
///   attempt column is then empty); `derived_outcome`: from the success criterion, end and time limit;
///   `overridden`: `true` when the observer's verdict replaced it, else `false`; `reason`: why.
/// - `time_s`: end − start of the attempt in seconds, for every attempt that ended (whatever its outcome;
///   the geometric mean takes successes only).
/// - `seq`: the participant's SEQ answer for the task (1–7), also for a task not attempted.
/// - `misclicks`: taps that nothing took (a tap gesture not recognised; without tap gesture events, a tap on
///   no element); `unresponsive_taps`: taps the unresponsive-tap detector counts;
///   `extra_views`: views beyond the expected path (empty without one); `backtracks`: pop and dismiss transitions.
/// - `views`: the views that appeared during the attempt, in order, joined by `>`; `problems`: the ids of the
///   problem groups hit during the attempt, joined by `;`.
/// - `sus`: the participant's SUS score in the iteration.
/// - The task's numbers in the iteration, the same on each of its rows: `completion_rate` with `completion_low` and
///   `completion_high` (adjusted Wald), `time_geomean_s` with `time_low` and `time_high`, and `seq_mean`.
/// - `quotes`: what the participant said during the attempt (think-aloud transcript segments), in order,
///   joined by ` | `; `exclamations`: the exclamations among them ("oh no"), in order, joined by `;`.
/// - `marked_by`: whose marks delimit the attempt: `app` (its task events), `tester` (the tester's own marks),
///   `observer`, joined by `;` in that order.
///   Each added last, so that the columns before keep their places.
public enum StudyExport {
    /// The header, in order (docs/STUDIES.md documents each column).
    public static let columns: [String] = [
        "study", "iteration", "iteration_label", "participant", "attributes", "task", "session", "runs",
        "outcome", "derived_outcome", "overridden", "reason", "time_s", "seq",
        "misclicks", "unresponsive_taps", "extra_views", "backtracks", "views", "problems", "sus",
        "completion_rate", "completion_low", "completion_high", "time_geomean_s", "time_low", "time_high", "seq_mean",
        "quotes", "exclamations", "marked_by",
    ]

    /// What the outcome column says of a task never begun.
    public static let notAttempted = "not attempted"

    public static func csv(_ results: StudyResults) -> String {
        var csv = CSVWriter()
        csv.row(columns)
        var attempts: [AttemptKey: TaskAttempt] = [:]
        for attempt in results.attempts {
            attempts[AttemptKey(iteration: attempt.iteration, participant: attempt.participant, task: attempt.task)] = attempt
        }
        let seq = AttemptKey.latestRatings(results.responses.seq)
        let metrics = Dictionary(results.taskMetrics.map { ("\($0.iteration)\u{0}\($0.task)", $0) }) { first, _ in first }
        for iteration in results.iterations {
            let participants = Set(results.sessions.filter { $0.iteration == iteration.number }.map(\.participant)).sorted()
            for participant in participants {
                let attributes = results.study.participant(participant)?.attributes ?? [:]
                for task in results.study.tasks {
                    let key = AttemptKey(iteration: iteration.number, participant: participant, task: task.name)
                    let numbers = metrics["\(iteration.number)\u{0}\(task.name)"]
                    csv.row([
                        results.study.name, "\(iteration.number)", iteration.label ?? "", participant,
                        attributes.keys.sorted().map { "\($0)=\(attributes[$0]!)" }.joined(separator: ";"), task.name,
                    ] + attemptFields(attempts[key]) + [
                        seq[key].map(String.init) ?? "",
                    ] + measureFields(attempts[key]) + [
                        ExportNumber.text(iteration.susScores[participant]),
                    ] + aggregateFields(numbers) + speechFields(attempts[key]) + [
                        (attempts[key]?.markedBy ?? []).map(\.rawValue).joined(separator: ";"),
                    ])
                }
            }
        }
        return csv.text
    }

    /// session … time_s.
    private static func attemptFields(_ attempt: TaskAttempt?) -> [String] {
        guard let attempt else { return ["", "0", notAttempted, "", "", "never begun", ""] }
        return ["\(attempt.session)", "\(attempt.runs)", attempt.outcome.rawValue, attempt.derivedOutcome.rawValue,
                attempt.overridden ? "true" : "false", attempt.reason, ExportNumber.text(attempt.duration)]
    }

    /// misclicks … problems.
    private static func measureFields(_ attempt: TaskAttempt?) -> [String] {
        guard let attempt else { return ["", "", "", "", "", ""] }
        return ["\(attempt.misclicks)", "\(attempt.unresponsiveTaps)", attempt.extraViews.map(String.init) ?? "", "\(attempt.backtracks)",
                attempt.views.joined(separator: ">"), attempt.problems.joined(separator: ";")]
    }

    /// quotes, exclamations.
    private static func speechFields(_ attempt: TaskAttempt?) -> [String] {
        let quotes = attempt?.quotes ?? []
        return [quotes.map(\.text).joined(separator: " | "), quotes.compactMap(\.exclamation).joined(separator: ";")]
    }

    /// completion_rate … seq_mean.
    private static func aggregateFields(_ metrics: TaskMetrics?) -> [String] {
        [metrics?.completion?.value, metrics?.completion?.interval?.low, metrics?.completion?.interval?.high,
         metrics?.time?.value, metrics?.time?.interval?.low, metrics?.time?.interval?.high, metrics?.seq?.value]
            .map(ExportNumber.text)
    }
}

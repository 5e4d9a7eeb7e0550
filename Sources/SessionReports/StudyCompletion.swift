package import SessionModel

/// Where one study's recruitment stands, as read from the catalog: all the decision needs.
package struct RecruitmentProgress: Sendable, Equatable {
    package var study: String
    package var target: Int
    /// Invitations of the recruitment that are `done`.
    package var done: Int
    /// Seconds since 1970; nil: none.
    package var deadline: Double?
    package var completed: Bool

    package init(study: String, target: Int, done: Int, deadline: Double?, completed: Bool) {
        self.study = study
        self.target = target
        self.done = done
        // A deadline that is no time at all (from a damaged catalog) is none, not one that passed.
        self.deadline = deadline.flatMap { $0.isFinite ? $0 : nil }
        self.completed = completed
    }

    /// A recruitment and its study's invitations.
    package init(_ recruitment: Recruitment, invitations: [Invitation]) {
        self.init(study: recruitment.study, target: recruitment.target,
                  done: invitations.count { $0.status == .done && $0.iteration == recruitment.iteration },
                  deadline: recruitment.deadline, completed: recruitment.completed != nil)
    }

    package enum Verdict: Sendable, Equatable {
        case complete(Recruitment.CompletionReason)
        /// Not yet: look again at `deadline` (nil: only when invitations change).
        case wait(deadline: Double?)
        case alreadyCompleted
    }

    /// The target counts first: a study whose last invitation was done just before its deadline
    /// completed by its target, even when this is only looked at after the deadline (a restart).
    package func verdict(now: Double) -> Verdict {
        if completed { return .alreadyCompleted }
        if done >= target { return .complete(.target) }
        if let deadline, deadline <= now { return .complete(.deadline) }
        return .wait(deadline: deadline)
    }
}

/// A study that completed: what the catalog records, the lifecycle event says and the hook is told.
package struct StudyCompletionEvent: Sendable, Equatable {
    package var study: String
    package var reason: Recruitment.CompletionReason
    /// The study report's index.html; empty when it could not be written (the log says why).
    package var report: String
    package var done: Int
    package var target: Int
}

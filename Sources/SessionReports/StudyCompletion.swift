package import SessionModel

/// A study that completed: what the catalog records, the lifecycle event says and the hook is told.
package struct StudyCompletionEvent: Sendable, Equatable {
    package var study: String
    package var reason: Recruitment.CompletionReason
    /// The study report's index.html; empty when it could not be written (the log says why).
    package var report: String
    package var done: Int
    package var target: Int
}

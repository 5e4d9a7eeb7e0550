internal import Dispatch

/// Seconds of synchronous CPU and file work (a session's analysis, writing a report) run on threads of
/// their own, so that a daemon making a study report (the console) keeps its Swift concurrency threads,
/// which serve its requests, free.
public enum BlockingWork {
    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            workers.async { continuation.resume(with: Result(catching: work)) }
        }
    }

    private static let workers = DispatchQueue(label: "mueval.blocking-work", attributes: .concurrent)
}

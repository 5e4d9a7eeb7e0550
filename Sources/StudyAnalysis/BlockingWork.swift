internal import Dispatch
#if canImport(Glibc)
internal import Glibc
#endif

/// Seconds of synchronous CPU and file work (a session's analysis, writing a report) run on threads of
/// their own, so that a daemon making a study report (the console) keeps its Swift concurrency threads,
/// which serve its requests, free.
public enum BlockingWork {
    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            workers.async {
                let result = Result(catching: work)
                giveBackFreedMemory()
                continuation.resume(with: result)
            }
        }
    }

    private static let workers = DispatchQueue(label: "mueval.blocking-work", attributes: .concurrent)

    /// glibc keeps what a program frees for its next allocations; an analysis frees a session's worth at once
    /// (muevald held 196 MB after the report of a 500,000-event session, 67 MB before it), which a daemon that
    /// analyses only after a stop should give back to the system.
    private static func giveBackFreedMemory() {
        _ = mallocTrim?(0)
    }

    /// glibc's `malloc_trim`, which its Swift module does not export (malloc.h); nil with another C library.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        #if canImport(Glibc)
        dlsym(nil, "malloc_trim").map { unsafeBitCast($0, to: (@convention(c) (Int) -> Int32).self) }
        #else
        nil
        #endif
    }()
}

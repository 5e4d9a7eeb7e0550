internal import MuEvalAsync
internal import ReplicationArchive

/// Runs an operation that may never finish, and gives up on it after a while.
///
/// Not a task group: a PostgresNIO query written to a connection that closed under it may never
/// complete, and a group waits for every child, so a timeout in a group would hang with it. Here
/// the operation runs in a task of its own; when time is up (or the caller is cancelled) `expire`
/// runs (closing the connection, which fails what is pending on it) and the caller goes on.
enum Deadline {
    static func run<Value: Sendable>(seconds: Double, expire: @escaping @Sendable () async -> Void,
                                     _ operation: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let outcome = AsyncCondition<Result<Value, any Error>?>(nil)
        Task {
            let result: Result<Value, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            outcome.withState { $0 = result }
        }
        if await outcome.wait(until: { $0 != nil }, timeout: .seconds(seconds)), let result = outcome.withState({ $0 }) {
            return try result.get()
        }
        if Task.isCancelled {
            Task { await expire() }
            throw CancellationError()
        }
        await expire()
        throw ReplicationError.timedOut(seconds: seconds)
    }
}

internal import NIOConcurrencyHelpers

/// Runs an operation that may never finish, and gives up on it after a while.
///
/// Not a task group: a PostgresNIO query written to a connection that closed under it may never
/// complete, and a group waits for every child, so a timeout in a group would hang with it. Here
/// the operation runs in a task of its own; when time is up (or the caller is cancelled) `expire`
/// runs (closing the connection, which fails what is pending on it) and the caller goes on.
enum Deadline {
    static func run<Value: Sendable>(seconds: Double, expire: @escaping @Sendable () async -> Void,
                                     _ operation: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let waiter = NIOLockedValueBox<CheckedContinuation<Value, any Error>?>(nil)
        let finish = { @Sendable (result: Result<Value, any Error>) in
            waiter.withLockedValue { continuation in
                continuation?.resume(with: result)
                continuation = nil
            }
        }
        let timer = NIOLockedValueBox<Task<Void, Never>?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiter.withLockedValue { $0 = continuation }
                // Cancelled before the handler was in place: `onCancel` found nothing to resume.
                if Task.isCancelled {
                    finish(.failure(CancellationError()))
                    return
                }
                timer.withLockedValue {
                    $0 = Task {
                        do { try await Task.sleep(for: .seconds(seconds)) } catch { return }
                        await expire()
                        finish(.failure(ReplicationError.timedOut(seconds: seconds)))
                    }
                }
                Task {
                    do { finish(.success(try await operation())) } catch { finish(.failure(error)) }
                    timer.withLockedValue { $0?.cancel() }
                }
            }
        } onCancel: {
            timer.withLockedValue { $0?.cancel() }
            finish(.failure(CancellationError()))
            Task { await expire() }
        }
    }
}

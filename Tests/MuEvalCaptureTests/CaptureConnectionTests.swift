@testable import MuEvalCapture
import Dispatch
import NIOConcurrencyHelpers
import Testing

/// The connection's write watchdog, with the writing task held off its thread as a busy pool holds it.
@Suite struct CaptureConnectionTests {
    /// Runs its jobs one at a time on a queue the test can fill: the writer's resumption waits behind
    /// whatever the test puts there, while the event loop runs on.
    final class QueueExecutor: TaskExecutor {
        let queue = DispatchQueue(label: "CaptureConnectionTests")

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    /// The CI failure of 2026-11-29: the watchdog was cancelled only when the writer ran again, so a
    /// write that had ended closed its connection when the pool was busy for longer than the timeout.
    @Test func aWriteThatEndedKeepsItsConnectionHoweverLateTheWriterResumes() async throws {
        let server = try await CaptureManagerTests.FakeServer(.mute)
        let closed = NIOLockedValueBox(false)
        let connection = try await CaptureConnection.connect(
            to: server.address, security: nil, timeout: 10, received: { _ in }, closed: { closed.withLockedValue { $0 = true } })
        let executor = QueueExecutor()
        let writing = DispatchSemaphore(value: 0)
        let writer = Task(executorPreference: executor) {
            writing.signal()
            try await connection.write([[1, 2, 3]], timeout: 0.2)
        }
        // Queued behind the job that issues the write: the writer resumes after three watchdog timeouts.
        writing.wait()
        executor.queue.async { _ = DispatchSemaphore(value: 0).wait(timeout: .now() + 0.6) }
        try await writer.value
        #expect(!closed.withLockedValue { $0 }, "the watchdog closed a connection whose write had ended")
        await connection.close()
        await server.close()
    }
}

internal import Foundation
public import SessionCore
internal import SessionModel
public import ServiceLifecycle

/// Transcription's part in the daemon: resumes the transcriptions a restart interrupted, queues
/// the audio of each session that stops or is imported (following the sessions' lifecycle events),
/// and stops the recogniser at shutdown (an interrupted stream is taken up again at the next start).
public struct TranscriptionWorker: Service {
    let service: TranscriptionService
    let registry: SessionRegistry
    /// When the daemon started: the sessions stopped since are the ones a follower that fell behind may have missed.
    let since: Double
    /// Subscribed at construction, so that no stop before `run` is missed.
    private let events: SessionEventSubscription

    public init(service: TranscriptionService, registry: SessionRegistry, since: Double) {
        self.service = service
        self.registry = registry
        self.since = since
        events = registry.events.subscribe()
    }

    public func run() async throws {
        service.resume((try? registry.sessions()) ?? [], now: Date().timeIntervalSince1970)
        await cancelWhenGracefulShutdown { await follow() }
        try? await gracefulShutdown()
        service.shutdown()
    }

    private func follow() async {
        for await event in events {
            let now = Date().timeIntervalSince1970
            switch event {
            case .stopped(let record), .imported(let record, _):
                service.sessionStopped(record, now: now)
            case .missed:
                // Stops may be among the dropped events: what stopped since the start and was never queued is queued now.
                let stopped = ((try? registry.sessions()) ?? []).filter { max($0.created, $0.stopped ?? 0) >= since }
                service.catchUp(stopped, now: now)
            default:
                break
            }
        }
    }
}

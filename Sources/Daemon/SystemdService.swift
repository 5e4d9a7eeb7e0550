internal import CaptureServer
internal import NIOCore
internal import MuEvalAsync
internal import ServiceLifecycle

/// Keeps systemd informed (Type=notify): `READY=1` once devices and muevalctl can connect,
/// `STATUS=` as sessions and counts change, `WATCHDOG=1` while the event loops turn, and
/// `STOPPING=1` as soon as shutdown begins. Listed last among the services, so that it is the
/// first to hear of a graceful shutdown.
final class SystemdService: Service {
    private let notifier: SystemdNotifier
    private let readiness: ReadinessGate
    private let group: EventLoopGroup
    private let status: @Sendable () -> String

    init(notifier: SystemdNotifier, readiness: ReadinessGate, group: EventLoopGroup, status: @escaping @Sendable () -> String) {
        self.notifier = notifier
        self.readiness = readiness
        self.group = group
        self.status = status
    }

    func run() async {
        let (notifier, readiness, group, status) = (notifier, readiness, group, status)
        await withGracefulShutdownHandler {
            // Ends by cancellation at shutdown: not a failure of the daemon.
            try? await cancelWhenGracefulShutdown {
                // Shutdown before start-up finished: never READY=1.
                guard await readiness.wait() else { return }
                var sent = status()
                notifier.notify("READY=1", "STATUS=\(sent)")
                // Half the watchdog period, as sd_watchdog_enabled(3) advises; STATUS at least every 5 s.
                let period = notifier.watchdogInterval.map { min($0 / 2, .seconds(5)) } ?? .seconds(5)
                while true {
                    try await Task.sleep(for: period)
                    if notifier.watchdogInterval != nil {
                        // Only a daemon whose event loops still run is alive.
                        try await group.next().submit {}.get()
                        notifier.notify("WATCHDOG=1")
                    }
                    let current = status()
                    if current != sent {
                        notifier.notify("STATUS=\(current)")
                        sent = current
                    }
                }
            }
        } onGracefulShutdown: {
            notifier.notify("STOPPING=1", "STATUS=stopping: committing open sessions")
        }
    }
}

/// Opens once every part of the daemon that clients connect to is listening.
final class ReadinessGate: Sendable {
    enum Part: Hashable, Sendable {
        case captureServer, controlSocket, console
    }

    /// The parts not listening yet.
    private let missing: AsyncCondition<Set<Part>>

    init(waitingFor parts: Set<Part>) {
        missing = AsyncCondition(parts)
    }

    func ready(_ part: Part) {
        missing.withState { _ = $0.remove(part) }
    }

    /// Returns true once every part is ready; false when the task was cancelled first.
    func wait() async -> Bool {
        await missing.wait { $0.isEmpty }
    }
}

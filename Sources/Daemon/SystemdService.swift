internal import CaptureServer
internal import NIOCore
internal import NIOConcurrencyHelpers
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
                await readiness.wait()
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

    private struct State {
        var missing: Set<Part>
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state: NIOLockedValueBox<State>

    init(waitingFor parts: Set<Part>) {
        state = NIOLockedValueBox(State(missing: parts))
    }

    func ready(_ part: Part) {
        let waiters = state.withLockedValue { state -> [CheckedContinuation<Void, Never>] in
            state.missing.remove(part)
            guard state.missing.isEmpty else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        waiters.forEach { $0.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let open = state.withLockedValue { state -> Bool in
                if state.missing.isEmpty { return true }
                state.waiters.append(continuation)
                return false
            }
            if open { continuation.resume() }
        }
    }
}

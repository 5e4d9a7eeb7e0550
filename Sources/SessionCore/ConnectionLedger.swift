internal import Foundation
internal import NIOConcurrencyHelpers
public import SessionModel

/// The daemon's one `ConnectionAdmission`, shared by the capture server, the console and the control
/// socket: each asks it before serving a connection and tells it what the connection became and
/// when it closed. It closes the connections the admission names for eviction, through the closer
/// each registered (outside its lock), and makes `status`'s `descriptors`.
public final class ConnectionLedger: Sendable {
    /// What a server does with a new connection.
    public enum Admitted: Sendable, Equatable {
        case admitted(ConnectionAdmission.ID)
        case refused(Refusal)
    }

    private struct State {
        var admission: ConnectionAdmission
        var closers: [ConnectionAdmission.ID: @Sendable () -> Void] = [:]
        var control = 0
        var timedOut = 0
    }
    private let state: NIOLockedValueBox<State>

    public init(budget: DescriptorBudget) {
        state = NIOLockedValueBox(State(admission: ConnectionAdmission(budget: budget)))
    }

    public var budget: DescriptorBudget { state.withLockedValue { $0.admission.budget } }

    /// New caps after a reload (`server.max_connections`, `console.max_connections`).
    public func update(capture: Int, console: Int) {
        state.withLockedValue { state in
            var budget = state.admission.budget
            budget.requestedCapture = capture
            budget.requestedConsole = console
            state.admission.update(budget)
        }
    }

    /// A connection was accepted on `server`; `close` ends it if it is chosen to make room later
    /// (any thread: a channel's close, or a signal through its pipeline).
    public func admit(_ server: ConnectionServer, close: @escaping @Sendable () -> Void) -> Admitted {
        let (admitted, evicted) = state.withLockedValue { state -> (Admitted, (@Sendable () -> Void)?) in
            switch state.admission.open(server) {
            case .admit(let id, let evict):
                state.closers[id] = close
                return (.admitted(id), evict.flatMap { state.closers.removeValue(forKey: $0) })
            case .refuse(let reason, let evict):
                return (.refused(reason), evict.flatMap { state.closers.removeValue(forKey: $0) })
            }
        }
        evicted?()
        return admitted
    }

    public func became(_ id: ConnectionAdmission.ID, _ kind: ConnectionKind) {
        state.withLockedValue { $0.admission.became(id, kind) }
    }

    public func closed(_ id: ConnectionAdmission.ID) {
        state.withLockedValue { state in
            state.admission.closed(id)
            state.closers[id] = nil
        }
    }

    /// A hello, header or handshake timeout closed a connection.
    public func timedOut() {
        state.withLockedValue { $0.timedOut += 1 }
    }

    /// The control socket's connections: counted for `status`, served from the reserve.
    public func controlOpened() { state.withLockedValue { $0.control += 1 } }
    public func controlClosed() { state.withLockedValue { $0.control -= 1 } }

    /// What `status` and /metrics show.
    public func status() -> DescriptorStatus {
        let open = Self.openDescriptors()
        return state.withLockedValue { state in
            let admission = state.admission
            let budget = admission.budget
            return DescriptorStatus(
                limit: budget.limit, open: open, reserve: budget.reserve, connectionLimit: budget.connections,
                captureLimit: budget.capture, consoleLimit: budget.console,
                captureDevices: admission.count(.captureDevice), capturePending: admission.count(.capturePending),
                consoleHTTP: admission.count(.consoleHTTP), consolePending: admission.count(.consolePending),
                consoleWebSockets: admission.count(.consoleWebSocket), control: state.control,
                refused: admission.refused, evicted: admission.evicted, timedOut: state.timedOut)
        }
    }

    /// The descriptors open now, the directory's own included (-1 where /proc is not mounted).
    static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }
}

public import MuEvalWire
internal import NIOConcurrencyHelpers

/// Errors of session management, worded for the developer at the `muevalctl` prompt.
public enum SessionError: Error, CustomStringConvertible, Equatable {
    case notFound(String)
    case alreadyStopped(Int64)
    case stillRecording(Int64)
    case deviceBusy(device: String, session: Int64)
    case ambiguous(String)
    /// Being stopped right now: it takes events neither through its journal nor in its final file yet.
    case stopping(Int64)

    public var description: String {
        switch self {
        case .notFound(let key): "no session \"\(key)\" (see `muevalctl sessions`)"
        case .alreadyStopped(let id): "session \(id) is already stopped"
        case .stillRecording(let id): "session \(id) is still open: stop it first (`muevalctl stop \(id)`)"
        case .deviceBusy(let device, let session): "device \(device) already records into session \(session): stop that one first"
        case .ambiguous(let key): "\"\(key)\" names several sessions: use the id"
        case .stopping(let id): "session \(id) is being stopped: try again in a moment"
        }
    }
}

/// How a device came to its session, or why it has none.
public enum AttachOutcome: Sendable {
    case attached(EvaluationSession)
    /// `logged`: the registry logged it already, rate-limited (a wrong pairing code), so the
    /// connection does not: a flood of guesses must not flood the journal.
    case rejected(reason: String, logged: Bool = false)
    /// A session is being found or opened for the device, off the caller's thread (an invitation to look
    /// up, policy `auto`): the outcome follows through the `opened` callback of `attach`.
    case opening
}

/// Who a connection is: the hello's device id, or its address when it sent no hello.
public struct ConnectingDevice: Sendable, Equatable {
    public var id: String
    public var hello: DeviceHello?
    /// The device's network address: what wrong codes are counted against (`PairingGuard`).
    public var address: String
    /// It must present an invitation or a pairing code to get a session (a web device, `capture.web_require_code`):
    /// a page's device token would be no secret, and any page may connect.
    public var mustPresentCode: Bool

    public init(id: String, hello: DeviceHello?, address: String, mustPresentCode: Bool = false) {
        self.id = id
        self.hello = hello
        self.address = address
        self.mustPresentCode = mustPresentCode
    }
}

/// Where phones reach the web console (its public address, without a trailing `/`), once it
/// listens: an invited session's welcome links its questionnaire page there. Nil: no console.
public final class ConsoleAddress: Sendable {
    private let url = NIOLockedValueBox<String?>(nil)

    public init() {}

    public var current: String? { url.withLockedValue { $0 } }

    public func set(_ url: String?) {
        self.url.withLockedValue { $0 = url }
    }
}

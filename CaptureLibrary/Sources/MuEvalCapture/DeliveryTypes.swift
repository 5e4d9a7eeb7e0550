public import MuEvalWire

/// What a recorded message is to the session's sensor selection (`<welcome>`'s `sensors`).
public enum Selectable: Sendable, Equatable {
    case event(eventClass: String, sensor: String?)
    case media(MediaKind)

    func isSelected(by selection: SensorSelection) -> Bool {
        switch self {
        case .event(let eventClass, let sensor): selection.selects(eventClass: eventClass, sensor: sensor)
        case .media(let kind): selection.selects(kind)
        }
    }
}

// What the delivery state machine is configured with, says and counts.
extension DeliveryStateMachine {
    public struct Limits: Sendable, Equatable {
        /// Pending messages at most: recorded and not yet settled. The default holds half an hour of
        /// a tester at 50 events/s; the bytes limit usually comes first.
        public var capacity: Int
        /// Their encoded bytes at most (screenshots and media chunks are large).
        public var maxBytes: Int
        /// Bytes per write at most: a large backlog goes out in batches, so acks come back meanwhile.
        public var maxBatchBytes: Int
        public var policy: DropPolicy
        /// Delays between connection attempts, doubling from the first to the last, with jitter.
        public var reconnectDelays: ClosedRange<Double>
        /// Seconds a connection may leave written messages unacknowledged (or a write unfinished)
        /// before it is taken for dead and replaced: a phone that changed networks has a socket that
        /// TCP would give up on only after many minutes. muevald acknowledges within a group commit.
        public var ackTimeout: Double

        public init(capacity: Int = 100_000, maxBytes: Int = 64 << 20, maxBatchBytes: Int = 256 << 10,
                    policy: DropPolicy = .dropNewest, reconnectDelays: ClosedRange<Double> = 0.05...30, ackTimeout: Double = 30) {
            self.capacity = capacity
            self.maxBytes = maxBytes
            self.maxBatchBytes = maxBatchBytes
            self.policy = policy
            self.reconnectDelays = reconnectDelays
            self.ackTimeout = ackTimeout
        }
    }

    /// What happens to a message recorded while the queue is full.
    public enum DropPolicy: String, Sendable {
        /// The new message is not kept: what was recorded first is delivered (the session's start).
        case dropNewest
        /// The oldest pending message makes room: the latest state is delivered.
        case dropOldest
    }

    public enum Link: Sendable, Equatable {
        case idle
        case connecting
        /// `helloSent`: the `<hello>` went out on this connection.
        case connected(helloSent: Bool)
        case waiting(until: Double)
    }

    public enum Action: Sendable, Equatable {
        /// Find the server (or take the configured address) and connect; then `connected` or `connectFailed`.
        case connect
        /// Append these messages to the spool before they are written anywhere; then `spooled` (or `spoolFailed`).
        case spool([Int64])
        /// Everything through this seq is settled: the spool may forget it.
        case forgetSpooled(through: Int64)
        /// Write (the `<hello>` first when `hello`) these messages; then `written`.
        case write(hello: Bool, seqs: [Int64])
        /// No acknowledgement for `ackTimeout`: close the connection (its close is `connectionLost`).
        case replaceConnection
        /// The end (`stop` and nothing awaited, or its deadline): write `<goodbye/>` and close.
        case sayGoodbye
        case finish
        /// Nothing to do until something happens, or until this time.
        case wait(until: Double?)
    }

    public struct Statistics: Sendable, Equatable, Codable {
        /// Messages recorded (kept in the queue), and those restored from the spool at the start.
        public var recorded = 0
        public var restored = 0
        /// Messages the queue had no room for (`DropPolicy`).
        public var dropped = 0
        /// Messages written once, and writes of messages already written on an earlier connection.
        public var sent = 0
        public var resent = 0
        public var acknowledged = 0
        /// Messages the server refused (an `<error>` naming its seq alone).
        public var refused = 0
        public var connections = 0
        public var disconnects = 0
        /// Sessions that welcomed the device, in order.
        public var sessions: [String] = []
        /// The last connection failure or server error.
        public var lastProblem: String?
        /// Messages written to the spool (restored ones were already there).
        public var spooled = 0
        public var pending = 0
        public var pendingBytes = 0
    }
}

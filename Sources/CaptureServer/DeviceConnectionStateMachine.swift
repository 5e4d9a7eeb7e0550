internal import MuEvalWire
internal import SessionCore
internal import JournalStorage
internal import WireProtocol

/// What one device connection knows and decides: who the device is, which session it records
/// into, which seqs to acknowledge, why reads are held, how loudly to report bad input.
/// Methods take what happened and return what to do; `DeviceConnectionHandler` does it.
/// No I/O here, so it is tested without sockets (CaptureServerTests). A struct mutated in place:
/// nothing it does per event allocates.
struct DeviceConnectionStateMachine {
    /// Why reads are held back; the socket is read again when none holds.
    struct ReadHolds: OptionSet, Sendable {
        let rawValue: UInt8
        /// The session's journal is over its limit (storage backpressure).
        static let journal = ReadHolds(rawValue: 1 << 0)
        /// The partial-message budget is exhausted and this connection waits its turn.
        static let partialBudget = ReadHolds(rawValue: 1 << 1)
        /// A session is being opened for this device off the event loop (policy `auto`).
        static let session = ReadHolds(rawValue: 1 << 2)
    }

    private enum Lifecycle {
        case connecting
        case open(origin: UInt64)
        case closed
    }

    private enum Attachment {
        case none
        case opening
        case attached(EvaluationSession, device: String)
        case rejected(reason: String)
    }

    /// A session to leave: the connection ended or the device changed its identity.
    struct Detach {
        var session: EvaluationSession
        var device: String
        /// The device said goodbye (no gap in the recording).
        var cleanly: Bool
    }

    /// Where the next event goes.
    enum EventAction {
        case store(EvaluationSession)
        /// No open session: ask the registry for one (after appending what is batched).
        case attach(ConnectingDevice)
    }

    /// What to tell the device about the registry's answer.
    enum AttachAction {
        case welcome(EvaluationSession)
        /// `log`: the first rejection, or the first after a session (not once per event), unless the
        /// registry logged it (a wrong pairing code: rationed there, however many connections guess).
        case rejected(reason: String, log: Bool)
        /// Stop decoding until `sessionOpened`; reads are held meanwhile.
        case wait
    }

    /// How to report a malformed message: the first 100 in full, then a tally every 1,000,
    /// so that a flood of junk cannot flood the log too (the `status` counter has them all).
    enum MalformedReport: Equatable {
        case full
        case tally(Int)
        case none
    }

    static let malformedLoggedInFull = 100
    static let malformedTallyInterval = 1000

    private var lifecycle = Lifecycle.connecting
    private var attachment = Attachment.none
    private var identity: ConnectingDevice?
    /// The device id of a connection without `<hello>`, made once rather than per event.
    private(set) var deviceID = "address:unknown"
    private(set) var address = "unknown"
    /// A web device: it gets a session only by an invitation or a pairing code.
    private var mustPresentCode = false
    private var saidGoodbye = false
    /// A whole message arrived (a hello, or an event of a device that sends none): no hello timeout from then on.
    private(set) var hasSpoken = false
    private var malformedCount = 0
    private(set) var holds = ReadHolds()
    private var readHeldBack = false
    /// Bytes the decoder holds, as last reported to the partial-message budget.
    private(set) var partialBytes = 0

    // Acknowledgements are coalesced: only the highest durable seq matters.
    private var lastAcknowledged: Int64 = .min
    private var ackWaitingForWritability: Int64?
    /// The highest seq handed to the journal, and the highest it reported durable (or failed).
    private var lastAppendedSeq: Int64 = .min
    private var lastDurableSeq: Int64 = .min
    /// The highest seq of an event the session did not select: dealt with on arrival, acknowledged
    /// as soon as every stored event before it is durable (else a stream ending with such events
    /// would never be acknowledged).
    private var lastFilteredSeq: Int64 = .min

    // MARK: Lifecycle

    /// The connection was accepted and registered under `origin`.
    mutating func opened(origin: UInt64, address: String, mustPresentCode: Bool = false) {
        lifecycle = .open(origin: origin)
        self.address = address
        self.mustPresentCode = mustPresentCode
        deviceID = "address:\(address)"
    }

    /// The origin of this connection's events, while it is open.
    var origin: UInt64? {
        if case .open(let origin) = lifecycle { return origin }
        return nil
    }

    /// The connection ended: the session it recorded into, if any, to detach from. A session
    /// still opening is detached by whoever learns of it (`DeviceConnectionHandler.attach`).
    mutating func closed() -> Detach? {
        lifecycle = .closed
        defer { attachment = .none }
        guard case .attached(let session, let device) = attachment else { return nil }
        return Detach(session: session, device: device, cleanly: saidGoodbye)
    }

    // MARK: Messages

    /// A whole message was decoded; true the first time, when the connection stops being pending.
    mutating func spoke() -> Bool {
        defer { hasSpoken = true }
        return !hasSpoken
    }

    /// The device introduced itself: from now on it is `hello.deviceId`. Returns the session to
    /// leave first when the device changed its id (a new session is attached after).
    mutating func helloReceived(_ hello: DeviceHello) -> Detach? {
        let previous = identity?.id ?? deviceID
        identity = ConnectingDevice(id: hello.deviceId, hello: hello, address: address, mustPresentCode: mustPresentCode)
        deviceID = hello.deviceId
        guard case .attached(let session, let device) = attachment else {
            attachment = .none
            return nil
        }
        attachment = .none
        // The same device again: its session stays; attaching refreshes what the hello says.
        guard previous != hello.deviceId, session.isOpen else { return nil }
        return Detach(session: session, device: device, cleanly: true)
    }

    /// Who to attach as: the hello's identity, or the address.
    var device: ConnectingDevice {
        identity ?? ConnectingDevice(id: deviceID, hello: nil, address: address, mustPresentCode: mustPresentCode)
    }

    mutating func goodbyeReceived() {
        saidGoodbye = true
    }

    mutating func eventReceived() -> EventAction {
        if case .attached(let session, _) = attachment, session.isOpen { return .store(session) }
        return .attach(device)
    }

    /// The session the connection records into, open or (just) stopped: appending to a stopped
    /// one says `.closed`, and its events go to the device's next session.
    var session: EvaluationSession? {
        if case .attached(let session, _) = attachment { return session }
        return nil
    }

    /// The registry's answer to an attach (`.opening`: it answers later, through `sessionOpened`).
    mutating func attachOutcome(_ outcome: AttachOutcome) -> AttachAction {
        switch outcome {
        case .attached(let session):
            attachment = .attached(session, device: deviceID)
            return .welcome(session)
        case .rejected(let reason, let logged):
            let log: Bool
            switch attachment {
            case .rejected: log = false
            default: log = !logged
            }
            attachment = .rejected(reason: reason)
            return .rejected(reason: reason, log: log)
        case .opening:
            attachment = .opening
            holds.insert(.session)
            return .wait
        }
    }

    /// Whether the connection waits for a session being opened: decoding stops meanwhile, and
    /// reads stay held (`.session`) until the handler has handled what waited.
    var isWaitingForSession: Bool {
        if case .opening = attachment { return true }
        return false
    }

    /// The session being opened for this connection is open (or could not be). Then the message
    /// that waited for it is handled, decoding goes on, and `release(.session)` resumes reading.
    mutating func sessionOpened(_ outcome: AttachOutcome) -> AttachAction {
        guard case .opening = attachment else { return .wait }
        return attachOutcome(outcome)
    }

    /// Why the device gets no session: the registry's last answer.
    var rejectionReason: String {
        if case .rejected(let reason) = attachment { return reason }
        return "no session for this device"
    }

    // MARK: Acknowledgements

    /// An event was handed to the journal.
    mutating func appended(seq: Int64?) {
        if let seq, seq > lastAppendedSeq { lastAppendedSeq = seq }
    }

    /// An event the session does not select: acknowledged at once if nothing stored before it
    /// waits to be durable. Returns the seq to acknowledge now.
    mutating func filtered(seq: Int64?, writable: Bool) -> Int64? {
        guard let seq else { return nil }
        lastFilteredSeq = max(lastFilteredSeq, seq)
        guard lastAppendedSeq <= lastDurableSeq else { return nil }
        return acknowledge(seq, writable: writable)
    }

    /// The journal committed this connection's events up to `seq`. Returns the seq to acknowledge now.
    mutating func durable(seq: Int64, writable: Bool) -> Int64? {
        lastDurableSeq = max(lastDurableSeq, seq)
        let filteredSince = lastAppendedSeq <= lastDurableSeq && lastFilteredSeq > seq
        return acknowledge(filteredSince ? lastFilteredSeq : seq, writable: writable)
    }

    /// Events up to `seqs.upperBound` could not be stored: they count as dealt with (the error
    /// names them), so later acknowledgements are not held up by them.
    mutating func storageFailed(seqs: ClosedRange<Int64>?) {
        if let seqs { lastDurableSeq = max(lastDurableSeq, seqs.upperBound) }
    }

    /// The socket takes writes again: the acknowledgement that waited for it, if any.
    mutating func becameWritable() -> Int64? {
        guard let seq = ackWaitingForWritability else { return nil }
        return acknowledge(seq, writable: true)
    }

    private mutating func acknowledge(_ seq: Int64, writable: Bool) -> Int64? {
        guard seq > lastAcknowledged else { return nil }
        guard writable else {
            ackWaitingForWritability = seq
            return nil
        }
        lastAcknowledged = seq
        ackWaitingForWritability = nil
        return seq
    }

    // MARK: Reading

    /// NIO asks to read the socket: whether to pass the read on now (else it is held back).
    mutating func readRequested() -> Bool {
        guard holds.isEmpty else {
            readHeldBack = true
            return false
        }
        return true
    }

    mutating func hold(_ reason: ReadHolds) {
        holds.insert(reason)
    }

    /// A reason to hold reads is gone: whether to read now (a read was held back and no other reason holds).
    mutating func release(_ reason: ReadHolds) -> Bool {
        holds.remove(reason)
        guard holds.isEmpty, readHeldBack else { return false }
        readHeldBack = false
        return true
    }

    /// The decoder now holds `bytes`: the change to report to the partial-message budget.
    mutating func partialBytesChanged(to bytes: Int) -> (from: Int, to: Int) {
        defer { partialBytes = bytes }
        return (partialBytes, bytes)
    }

    // MARK: Errors

    /// A malformed message. Returns how to log it, and whether to close (the stream cannot be read on).
    mutating func malformed(fatal: Bool) -> (report: MalformedReport, close: Bool) {
        malformedCount += 1
        let report: MalformedReport = if malformedCount <= Self.malformedLoggedInFull {
            .full
        } else if malformedCount % Self.malformedTallyInterval == 0 {
            .tally(malformedCount)
        } else {
            .none
        }
        return (report, fatal)
    }
}

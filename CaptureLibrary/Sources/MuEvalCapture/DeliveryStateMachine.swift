internal import DequeModule
public import MuEvalWire

/// One device's delivery: the bounded queue of what it recorded and the server has not settled, the
/// link to the server, and when to write, resend, spool and give up. A value type that is told what
/// happened and says what to do (`nextAction`); `CaptureManager` carries it out with sockets and files,
/// the tests without either. Times are seconds on a monotonic clock.
///
/// An entry is settled when an `<ack>` covers it (durable, or not selected by the session) or an
/// `<error>` names its seq alone (refused for good). An `<error>` with a `fromSeq` range (a failed group
/// commit: a full disk) leaves its entries pending, to be written again after a delay; a later ack
/// does not settle them (docs/PROTOCOL.md). After a reconnect everything pending is written again
/// from the oldest, as the new connection's server may never have stored it; the server stores each
/// (device, seq) once.
public struct DeliveryStateMachine: Sendable {
    struct Entry: Sendable {
        enum State: Sendable { case unsent, sent, failed, settled }
        let seq: Int64
        let bytes: [UInt8]
        let kind: Selectable
        var state = State.unsent
        var everSent = false
    }

    public let limits: Limits
    private var entries: Deque<Entry> = []
    /// Index of the first entry that may be unsent: the writer looks from there.
    private var firstUnsent = 0
    private var nextSeq: Int64
    private var spooling: Bool
    /// The highest seq handed to the spool; nothing later is written to the server before it is spooled.
    private var spooledThrough: Int64
    private var forgottenThrough: Int64
    private(set) var link = Link.idle
    private var writing = false
    /// Written messages not yet settled on this connection, and since when one has been waited for.
    private var inFlight = 0
    private var awaitingSince: Double?
    /// An ack came: the wait for the rest starts over at the next `nextAction`.
    private var acknowledgedSinceLook = false
    /// The connection is being replaced: its close is not news (`lastProblem` keeps why).
    private var replacing = false
    private var attempts = 0
    /// When entries a ranged `<error>` failed are written again.
    private var retryAt: Double?
    /// The session's selection; nil before the first `<welcome>`: every message is awaited.
    public private(set) var selection: SensorSelection?
    private var stopDeadline: Double?
    private var finished = false
    public private(set) var statistics = Statistics()

    /// `firstSeq`: the seq of the first message recorded (after a restored backlog's).
    public init(limits: Limits = Limits(), firstSeq: Int64, spooling: Bool = false) {
        self.limits = limits
        nextSeq = max(firstSeq, 1)
        self.spooling = spooling
        spooledThrough = nextSeq - 1
        forgottenThrough = nextSeq - 1
    }

    // MARK: Recording

    public var hasRoom: Bool { statistics.pending < limits.capacity && statistics.pendingBytes < limits.maxBytes }

    /// Messages a spool kept from an earlier run, oldest first, before anything is recorded: they are
    /// delivered first, and new seqs continue after them.
    public mutating func restore(_ backlog: [(seq: Int64, bytes: [UInt8], kind: Selectable)]) {
        precondition(entries.isEmpty, "restore before recording")
        for message in backlog.sorted(by: { $0.seq < $1.seq }) {
            entries.append(Entry(seq: message.seq, bytes: message.bytes, kind: message.kind))
            statistics.pending += 1
            statistics.pendingBytes += message.bytes.count
        }
        statistics.restored = backlog.count
        if let last = entries.last?.seq {
            nextSeq = max(nextSeq, last + 1)
            spooledThrough = max(spooledThrough, last)
        }
        forgottenThrough = (entries.first?.seq).map { $0 - 1 } ?? nextSeq - 1
    }

    /// Queues the message `encode` writes with the next seq; nil when the queue has no room for it
    /// (`dropNewest`). The seq is taken here, so the queue is in seq order.
    public mutating func record(kind: Selectable, _ encode: (Int64) -> [UInt8]) -> Int64? {
        if !hasRoom {
            switch limits.policy {
            case .dropNewest:
                statistics.dropped += 1
                return nil
            case .dropOldest:
                while !hasRoom, let index = entries.firstIndex(where: { $0.state != .settled }) {
                    settle(at: index)
                    statistics.dropped += 1
                }
                popSettled()
            }
        }
        let seq = nextSeq
        nextSeq += 1
        let bytes = encode(seq)
        entries.append(Entry(seq: seq, bytes: bytes, kind: kind))
        statistics.recorded += 1
        statistics.pending += 1
        statistics.pendingBytes += bytes.count
        return seq
    }

    /// The encoded message and its kind, for the driver carrying out a `spool` or `write`.
    public func message(_ seq: Int64) -> (bytes: [UInt8], kind: Selectable)? {
        index(of: seq).map { (entries[$0].bytes, entries[$0].kind) }
    }

    // MARK: The link

    public mutating func connected() {
        link = .connected(helloSent: false)
        statistics.connections += 1
        firstUnsent = 0
    }

    /// Connecting failed (or finding the server did): try again after the next backoff delay.
    /// `jitter` in 0...1 spreads the devices of a lab over the delay's second half.
    public mutating func connectFailed(_ reason: String, now: Double, jitter: Double) {
        statistics.lastProblem = reason
        link = .waiting(until: now + backoff(jitter: jitter))
    }

    /// The connection closed or a write failed: nothing written on it is known to be stored.
    public mutating func connectionLost(_ reason: String?, now: Double, jitter: Double) {
        guard case .connected = link else { return }
        statistics.disconnects += 1
        if let reason, !replacing { statistics.lastProblem = reason }
        replacing = false
        for index in entries.indices where entries[index].state == .sent || entries[index].state == .failed {
            entries[index].state = .unsent
        }
        firstUnsent = 0
        retryAt = nil
        writing = false
        inFlight = 0
        awaitingSince = nil
        link = .waiting(until: now + backoff(jitter: jitter))
    }

    private mutating func backoff(jitter: Double) -> Double {
        let delays = limits.reconnectDelays
        let full = min(delays.lowerBound * Double(1 << min(attempts, 30)), delays.upperBound)
        attempts += 1
        return full * (0.5 + 0.5 * min(max(jitter, 0), 1))
    }

    // MARK: The server's replies

    /// `<welcome>`: the session and its selection; the backoff starts over.
    public mutating func welcomed(_ welcome: Welcome) {
        selection = SensorSelection(welcome.sensors)
        attempts = 0
        if !statistics.sessions.contains(welcome.sessionId) { statistics.sessions.append(welcome.sessionId) }
    }

    /// `<ack seq=S>`: what was written on this connection through S is settled, but what a ranged error failed.
    public mutating func acknowledged(through seq: Int64) {
        var index = 0
        while index < entries.count, entries[index].seq <= seq {
            if entries[index].state == .sent {
                settle(at: index)
                statistics.acknowledged += 1
            }
            index += 1
        }
        popSettled()
        acknowledgedSinceLook = true
    }

    /// `<error>`: with a seq alone, that message is refused for good (the reason is returned for the
    /// app); with `fromSeq`, those messages are written again after a delay.
    public mutating func refused(_ error: WireReplyError, now: Double, jitter: Double) -> String? {
        statistics.lastProblem = "the server said: \(error.reason)"
        guard let seq = error.seq else { return error.reason }
        if let from = error.fromSeq {
            for index in entries.indices where (from...seq).contains(entries[index].seq) && entries[index].state == .sent {
                entries[index].state = .failed
                inFlight -= 1
            }
            retryAt = now + backoff(jitter: jitter)
            return error.reason
        }
        guard let index = index(of: seq), entries[index].state != .settled else { return error.reason }
        settle(at: index)
        statistics.refused += 1
        popSettled()
        return error.reason
    }

    // MARK: Spool, writes and the end

    public mutating func spooled(through seq: Int64) {
        statistics.spooled += entries.reversed().prefix { $0.seq > spooledThrough }.filter { $0.seq <= seq }.count
        spooledThrough = max(spooledThrough, seq)
    }

    /// The spool cannot be written: delivery goes on from memory only.
    public mutating func spoolFailed(_ reason: String) {
        spooling = false
        statistics.lastProblem = reason
    }

    public mutating func written() {
        writing = false
    }

    /// Stop recording: deliver what is pending until `deadline`, then say goodbye.
    public mutating func stop(deadline: Double) {
        stopDeadline = min(stopDeadline ?? deadline, deadline)
    }

    /// Pending messages the session records (all before a `<welcome>`), and those it does not select.
    public var unsettled: (awaited: Int, notSelected: Int) {
        guard let selection else { return (statistics.pending, 0) }
        let notSelected = entries.reduce(0) { count, entry in
            entry.state != .settled && !entry.kind.isSelected(by: selection) ? count + 1 : count
        }
        return (statistics.pending - notSelected, notSelected)
    }

    public mutating func nextAction(now: Double) -> Action {
        if finished { return .finish }
        if spooling, let last = entries.last, last.seq > spooledThrough {
            return .spool(entries.reversed().prefix { $0.seq > spooledThrough }.reversed().map(\.seq))
        }
        let settledThrough = (entries.first?.seq).map { $0 - 1 } ?? nextSeq - 1
        if spooling, settledThrough > forgottenThrough {
            forgottenThrough = settledThrough
            return .forgetSpooled(through: settledThrough)
        }
        // The end comes after the spool has everything pending and has forgotten what is settled.
        if let stopDeadline, unsettled.awaited == 0 || now >= stopDeadline {
            if case .connected = link, !writing {
                link = .idle
                return .sayGoodbye
            }
            if !writing {
                finished = true
                return .finish
            }
        }
        switch link {
        case .idle:
            link = .connecting
            return .connect
        case .waiting(let until):
            if now >= until {
                link = .connecting
                return .connect
            }
            return .wait(until: min(until, stopDeadline ?? until))
        case .connecting:
            return .wait(until: stopDeadline)
        case .connected(let helloSent):
            if acknowledgedSinceLook {
                acknowledgedSinceLook = false
                awaitingSince = inFlight > 0 ? now : nil
            }
            if let since = awaitingSince, now - since >= limits.ackTimeout {
                awaitingSince = nil
                replacing = true
                statistics.lastProblem = "no acknowledgement for \(Int(exactly: limits.ackTimeout).map(String.init) ?? "\(limits.ackTimeout)") s: connecting again"
                return .replaceConnection
            }
            let ackDue = awaitingSince.map { $0 + limits.ackTimeout }
            if writing { return .wait(until: ackDue) }
            if let retryAt, now >= retryAt {
                self.retryAt = nil
                for index in entries.indices where entries[index].state == .failed { entries[index].state = .unsent }
                firstUnsent = 0
            }
            let batch = takeUnsent()
            if batch.isEmpty && helloSent {
                return .wait(until: [retryAt, stopDeadline, ackDue].compactMap { $0 }.min())
            }
            if !batch.isEmpty, awaitingSince == nil { awaitingSince = now }
            link = .connected(helloSent: true)
            writing = true
            return .write(hello: !helloSent, seqs: batch)
        }
    }

    /// Unsent entries from `firstUnsent`, spooled ones only while spooling, up to a batch's bytes.
    private mutating func takeUnsent() -> [Int64] {
        var seqs: [Int64] = []
        var bytes = 0
        var index = firstUnsent
        while index < entries.count {
            let entry = entries[index]
            if spooling, entry.seq > spooledThrough { break }
            if entry.state == .unsent {
                if bytes > 0, bytes + entry.bytes.count > limits.maxBatchBytes { break }
                bytes += entry.bytes.count
                seqs.append(entry.seq)
                entries[index].state = .sent
                inFlight += 1
                if entry.everSent { statistics.resent += 1 } else { statistics.sent += 1 }
                entries[index].everSent = true
            }
            index += 1
        }
        firstUnsent = index
        return seqs
    }

    private mutating func settle(at index: Int) {
        if entries[index].state == .sent { inFlight -= 1 }
        statistics.pending -= 1
        statistics.pendingBytes -= entries[index].bytes.count
        entries[index].state = .settled
    }

    private mutating func popSettled() {
        while entries.first?.state == .settled {
            entries.removeFirst()
            firstUnsent = max(firstUnsent - 1, 0)
        }
    }

    /// Entries are in seq order: binary search.
    private func index(of seq: Int64) -> Int? {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].seq < seq { low = middle + 1 } else { high = middle }
        }
        return low < entries.count && entries[low].seq == seq ? low : nil
    }
}

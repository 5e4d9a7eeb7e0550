import DequeModule
import MuEvalWire

/// capture.js's numbers (CaptureLibrary/Web/capture/constants.js), as web_phone.py takes them, so that the
/// server sees what phones do.
enum Delivery {
    static let batch = 0.1             // BATCH_MS: what is recorded within it goes out in one message
    static let backoffFirst = 0.5      // DELIVERY.reconnectFirstMs/LastMs, jitter over the second half
    static let backoffLast = 30.0
    static let ackTimeout = 15.0       // DELIVERY.ackTimeoutMs: no ack for what is in flight this long, the socket is dead
    static let probeAfter = 25.0       // DELIVERY.probeAfterMs: nothing heard this long, the hello again as a probe
    static let probeTimeout = 10.0     // DELIVERY.probeTimeoutMs: a probe unanswered this long, the socket is dead
    static let connectTimeout = 15.0   // DELIVERY.connectTimeoutMs
    static let rangeRetry = 5.0        // DELIVERY.rangeRetryMs: after a refused group commit, everything again after this
    static let maxBuffered = 1 << 20   // DELIVERY.maxBufferedBytes: above it, sending waits
    static let frameBytes = 65536      // FRAME_BATCH_CHARS: messages per text frame
}

/// An event recorded and not yet acknowledged. Its bytes are made again at each send from its seq and
/// `wall`, the same each time, instead of being kept.
struct Pending {
    var seq: Int64
    var wall: Double
    /// The (last) send, where its send→ack latency starts.
    var sent = 0.0
    var sends = 0
}

/// One web phone's delivery state and counters, as web_phone.py's `Phone` keeps them; the socket and the
/// clocks that drive it are PhoneDriver's.
struct Phone {
    let device: String
    let room: Int
    let address: String
    let begin: Double
    let end: Double
    let dropKind: String
    let dropAt: Double?
    var rng: PythonRandom

    var queued = Deque<Pending>()    // not sent on this connection, seq order
    var inflight = Deque<Pending>()  // sent on this connection, not acknowledged, seq order
    var nextSeq: Int64
    var made = 0, sent = 0, resent = 0, acked = 0, refused = 0
    var connections = 0, welcomes = 0
    var sessions: [String] = []
    var helloRefusals = 0, refusals = 0, failures = 0
    var welcomed = false, sendingDone = false, rangeRefused = false
    // delivery.js's clocks: when this connection last heard anything, since when it waits for an ack (nil: it
    // waits for none), and since when a probe is unanswered.
    var heard = 0.0
    var awaitingSince: Double?
    var probingSince: Double?
    var droppedAt: Double?
    var goodbye = "none"
    var measured = Measurements()

    /// web_phone.py's draws, in its order: the start, the drop's kind (mixed), the drop's moment.
    init(options: Options, room: Int, index: Int, address: String, rng: PythonRandom, start: Double) {
        var rng = rng
        self.room = room
        self.address = address
        let number = String(index)
        device = "\(options.devicePrefix)-r\(room)-\(String(repeating: "0", count: max(0, 4 - number.count)))\(number)"
        begin = start + rng.random() * options.ramp
        end = begin + options.seconds
        dropKind = options.drop == "mixed" ? rng.choice(["close", "reset", "silent"]) : options.drop
        dropAt = options.drop == "none" ? nil : begin + options.seconds * (0.1 + 0.8 * rng.random())
        nextSeq = options.firstSeq
        self.rng = rng
    }

    /// capture.js's reconnect delay: the second half of `delay`, at random.
    mutating func jittered(_ delay: Double) -> Double { delay / 2 + rng.random() * delay / 2 }

    /// The events due by `target` made in all, at `wall`.
    mutating func record(upTo target: Int, wall: Double) {
        guard target > made else { return }
        for _ in made..<target {
            queued.append(Pending(seq: nextSeq, wall: wall))
            nextSeq += 1
        }
        made = target
    }

    /// The next queued event, now in flight (sent at `now`).
    mutating func send(now: Double) -> Pending? {
        guard var item = queued.popFirst() else { return nil }
        if item.sends > 0 { resent += 1 } else { sent += 1 }
        item.sent = now
        item.sends += 1
        if inflight.isEmpty { awaitingSince = now }
        inflight.append(item)
        return item
    }

    /// A new connection: the last one's unacknowledged first, in seq order; nothing heard, nothing awaited.
    mutating func reconnecting(now: Double) {
        welcomed = false
        queued.prepend(contentsOf: inflight)
        inflight.removeAll()
        (heard, awaitingSince, probingSince) = (now, nil, nil)
    }

    /// A reply arrived (of any kind): the socket is alive.
    mutating func hearing(now: Double) {
        heard = now
        probingSince = nil
    }

    mutating func welcome(session: String) {
        welcomed = true
        welcomes += 1
        if !sessions.contains(session) { sessions.append(session) }
    }

    /// A cumulative ack: everything in flight up to `seq` is stored.
    mutating func settle(seq: Int64, now: Double) {
        var settled = 0
        while let first = inflight.first, first.seq <= seq {
            inflight.removeFirst()
            if now <= end { measured.during.append(now - first.sent) } else { measured.after.append(now - first.sent) }
            settled += 1
        }
        acked += settled
        if settled > 0 { awaitingSince = inflight.isEmpty ? nil : heard }
    }

    /// An `<error>`; true when the socket must go (a failed group commit: later acks do not cover it).
    mutating func refusal(_ error: WireReplyError) -> Bool {
        measured.errors[error.reason, default: 0] += 1
        if !welcomed {
            helloRefusals += 1  // the hello refused: nothing is sent until a session takes the device
        } else if error.fromSeq != nil {
            rangeRefused = true
            return true
        } else if let seq = error.seq {
            let before = inflight.count
            inflight.removeAll { $0.seq == seq }
            refused += before - inflight.count
        }
        return false
    }

    /// Sent, welcomed, and nothing left: the goodbye may go.
    var allAcknowledged: Bool { sendingDone && welcomed && queued.isEmpty && inflight.isEmpty }

    func summary(firstSeq: Int64) -> JSON {
        .object([
            ("device", .string(device)), ("room", .int(room)), ("address", .string(address)), ("made", .int(made)),
            ("sent", .int(sent)), ("acked", .int(acked)), ("refused", .int(refused)),
            ("unacked", .int(made - acked - refused)), ("resent", .int(resent)), ("first_seq", .int(Int(firstSeq))),
            ("last_seq", .int(Int(nextSeq - 1))), ("connections", .int(connections)),
            ("reconnects", .int(max(0, connections - 1))), ("welcomes", .int(welcomes)),
            ("sessions", .array(sessions.map(JSON.string))), ("drop", .string(droppedAt == nil ? "none" : dropKind)),
            ("refusals", .int(refusals)), ("failures", .int(failures)), ("hello_refusals", .int(helloRefusals)),
            ("goodbye", .string(goodbye)),
        ])
    }
}

import MuEvalWire
import NIOCore

/// One phone on the event loop: web_phone.py's `record`, `live` and `converse` as callbacks of timers and
/// sockets. Every phone of a run is on one loop thread, as every Python phone is on one asyncio thread: no
/// locks, and the order of what happens within a phone is Python's.
final class PhoneDriver: PhoneSocketEvents {
    private(set) var phone: Phone
    private unowned let run: Run
    private let hello: String
    /// web_phone.py's `self.ws`: the socket events go out on; nil while there is none, or once dropped.
    private var ws: PhoneSocket?
    /// The socket `converse` is on (it outlives `ws` when the phone drops it).
    private var conversation: Conversation?
    /// Silently dropped sockets, left open until the phone is done.
    private var abandoned: [PhoneSocket] = []
    private var backoff = Delivery.backoffFirst
    private var tick = 0
    /// Conversations so far: a poll timer of an earlier one is stale.
    private var conversations = 0
    private(set) var finished = false

    private struct Conversation {
        let socket: PhoneSocket
        let number: Int
        /// converse's `was_welcomed`: sampled when it wakes (every 0.5 s, or at the reader's end), as there.
        var wasWelcomed = false
        /// After the goodbye: the server's end of the stream is awaited this long (5 s).
        var closing: Scheduled<Void>?
    }

    init(phone: Phone, run: Run) {
        self.phone = phone
        self.run = run
        hello = TouchEvents.hello(device: phone.device, appId: run.options.appId)
    }

    var isWelcomed: Bool { ws != nil && phone.welcomed }

    func start() {
        scheduleRecord()
        live()
    }

    // MARK: Recording and sending

    /// Every 100 ms, the events due by now (R a second, whether connected or not), then a send.
    private func scheduleRecord() {
        tick += 1
        let due = phone.begin + Double(tick) * Delivery.batch
        guard due <= phone.end else {
            phone.sendingDone = true
            return
        }
        run.setTimer(.record(due: due), for: self, at: due)
    }

    /// One of this phone's timers (Run's slots): a batch, or a poll of the conversation it was set for.
    func fired(_ timer: PhoneTimer) {
        switch timer {
        case .record(let due) where !finished: record(due: due)
        case .poll(let number) where conversation?.number == number && conversation?.closing == nil: poll()
        default: break  // the phone is done, or that conversation is over
        }
    }

    private func record(due: Double) {
        let now = Clock.now()
        phone.measured.late.append(now - due)
        phone.record(upTo: Int(run.options.rate * (min(now, phone.end) - phone.begin)), wall: Clock.wall())
        flush()
        // Right after a send: what it carried is in flight, unacknowledged, maybe stored, and must go again.
        if let dropAt = phone.dropAt, phone.droppedAt == nil, now >= dropAt, ws != nil { drop() }
        scheduleRecord()
    }

    /// Sends what is queued, in seq order, in text messages of up to 64 KB, while the socket's buffer allows.
    private func flush() {
        guard let socket = ws, phone.welcomed else { return }
        while !phone.queued.isEmpty && socket.isWritable {
            let now = Clock.now()
            var payload = socket.payloadBuffer(capacity: min(phone.queued.count * 420, Delivery.frameBytes + 512))
            while payload.readableBytes < Delivery.frameBytes, let item = phone.send(now: now) {
                run.events.write(seq: item.seq, wall: item.wall, into: &payload)
            }
            socket.send(payload)
        }
    }

    /// The socket dies without a goodbye; what it carried unacknowledged goes again on the next one.
    private func drop() {
        guard let socket = ws else { return }
        ws = nil
        phone.welcomed = false
        phone.droppedAt = Clock.now()
        if phone.dropKind == "silent" { abandoned.append(socket) }
        socket.drop(phone.dropKind)
    }

    // MARK: What the server says

    func received(_ data: ByteBuffer, on socket: PhoneSocket) {
        guard ws === socket else {
            // A dropped socket's late replies are not the phone's any more: its reader stops, and converse with it.
            if conversation?.socket === socket { ended(socket) }
            return
        }
        let now = Clock.now()
        phone.hearing(now: now)
        // As web_phone.py's `hear`: the welcome and the acks, then the errors (one may end the socket).
        var errors: [WireReplyError] = []
        Replies.read(data) { reply in
            switch reply {
            case .welcome(let welcome): phone.welcome(session: welcome.sessionId)
            case .ack(let seq): phone.settle(seq: seq, now: now)
            case .error(let error): errors.append(error)
            default: break
            }
        }
        for error in errors where phone.refusal(error) {
            // A failed group commit: later acks do not cover it; everything again on a new socket after 5 s.
            let refused = ws
            ws = nil
            refused?.abort()
        }
        flush()
    }

    func ended(_ socket: PhoneSocket) {
        guard conversation?.socket === socket else { return }
        endConversation()
    }

    // MARK: The connection's life

    /// web_phone.py's `live`, one turn: a connection, unless time is up or the goodbye was said.
    private func live() {
        guard Clock.now() < run.deadline, phone.goodbye == "none" else { return finish() }
        ConnectAttempt.open(run.endpoint, from: phone.address, on: run.loop, events: self) { outcome in
            self.connected(outcome)
        }
    }

    private func connected(_ outcome: ConnectOutcome) {
        switch outcome {
        case .refused(let refusal):
            phone.measured.refusals[refusal, default: 0] += 1
            phone.refusals += 1
            let delay = refusal.retryAfter.map { $0 + phone.rng.random() } ?? phone.jittered(backoff)
            backoff = min(backoff * 2, Delivery.backoffLast)
            after(delay) { self.live() }
        case .failed(let name):
            phone.measured.failures[name, default: 0] += 1
            phone.failures += 1
            let delay = phone.jittered(backoff)
            backoff = min(backoff * 2, Delivery.backoffLast)
            after(delay) { self.live() }
        case .upgraded(let socket):
            phone.connections += 1
            converse(socket)
        }
    }

    /// One connection: hello, welcome, everything unacknowledged again, until it ends or the goodbye.
    private func converse(_ socket: PhoneSocket) {
        ws = socket
        phone.reconnecting(now: Clock.now())
        conversations += 1
        conversation = Conversation(socket: socket, number: conversations)
        socket.send(hello)
        schedulePoll()
    }

    private func schedulePoll() {
        run.setTimer(.poll(conversation: conversations), for: self, at: Clock.now() + 0.5)
    }

    /// converse's wake-up every 0.5 s. As delivery.js: a hello unanswered waits (a session may take the device
    /// later); once welcomed, no ack for 15 s or no answer to a probe for 10 s is a dead socket; 25 s of
    /// silence, a probe; sent, welcomed and all acknowledged (or the deadline near), the goodbye.
    private func poll() {
        guard let socket = conversation?.socket else { return }
        if phone.welcomed { conversation?.wasWelcomed = true }
        let now = Clock.now()
        if ws !== socket || now > run.deadline { return endConversation() }
        if phone.welcomed {
            let ackLate = phone.awaitingSince.map { now - $0 >= Delivery.ackTimeout } ?? false
            let probeLate = phone.probingSince.map { now - $0 >= Delivery.probeTimeout } ?? false
            if ackLate || probeLate { return dead(phone.probingSince == nil ? "no ack for 15 s" : "no answer to a probe") }
            if phone.probingSince == nil, now - phone.heard >= Delivery.probeAfter {
                phone.probingSince = now
                socket.send(hello)
            }
        }
        let allAcknowledged = phone.allAcknowledged
        if allAcknowledged || phone.sendingDone && now > max(phone.end, run.deadline - 5) {
            phone.goodbye = allAcknowledged ? "after every ack" : "at the deadline"
            conversation?.wasWelcomed = true
            socket.sayGoodbye()
            // The server's close frame, or its end of the stream; at most 5 s.
            conversation?.closing = after(5) { self.endConversation() }
            return
        }
        schedulePoll()
    }

    private func dead(_ reason: String) {
        phone.measured.failures[reason, default: 0] += 1
        phone.failures += 1
        endConversation()
    }

    /// converse's return and its `finally`, then live's wait before the next connection.
    private func endConversation() {
        guard let ending = conversation else { return }
        conversation = nil
        ending.closing?.cancel()
        let welcomed = ending.wasWelcomed || (ws === ending.socket && phone.welcomed)
        if ws === ending.socket {
            ws = nil
            phone.welcomed = false
        }
        if !abandoned.contains(where: { $0 === ending.socket }) { ending.socket.abort() }
        if welcomed { backoff = Delivery.backoffFirst }
        guard phone.goodbye == "none" else { return live() }
        let delay = phone.rangeRefused ? Delivery.rangeRetry : phone.jittered(backoff)
        phone.rangeRefused = false
        backoff = min(backoff * 2, Delivery.backoffLast)
        after(delay) { self.live() }
    }

    private func finish() {
        guard !finished else { return }
        finished = true
        for socket in abandoned { socket.abort() }
        abandoned.removeAll()
        run.phoneFinished()
    }

    @discardableResult
    private func after(_ seconds: Double, _ task: @escaping () -> Void) -> Scheduled<Void> {
        run.loop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(seconds * 1e9)), task)
    }
}

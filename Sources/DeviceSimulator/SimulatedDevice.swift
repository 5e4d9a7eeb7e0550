internal import NIOCore
internal import WireProtocol

/// One simulated phone for one run: generates its events at the chosen pace and delivers each exactly once
/// to the server's session, across dropped connections and server restarts.
///
/// A single loop does everything in turn (connect, read replies, generate, write), so the state needs no
/// locks; it sleeps until the next event is due, and at most `pollInterval` so that replies and a lost
/// connection are noticed promptly.
struct SimulatedDevice {
    private static let pollInterval = Duration.milliseconds(5)
    /// Events generated per turn of the loop at most, so that a fast run still reads its replies.
    private static let batchSize = 256

    let options: SimulationOptions
    let server: ServerAddress
    private var stream: EventStream
    private var outbox: Outbox
    private var report: DeviceReport
    private var welcome: Welcome?
    /// The microphone, when the tester thinks aloud.
    private var recorder: ThinkAloudRecorder?
    private var thinkAloudProblem: String?

    init(index: Int, options: SimulationOptions, server: ServerAddress) {
        self.options = options
        self.server = server
        stream = EventStream(options, device: index)
        outbox = Outbox(capacity: options.bufferCapacity)
        report = DeviceReport(deviceId: stream.profile.deviceId, deviceName: stream.profile.hello.deviceName ?? "")
        if options.behaviour.thinksAloud {
            do {
                recorder = try ThinkAloudRecorder(options: options.thinkAloud, epoch: stream.epoch, device: stream.profile.deviceId)
            } catch {
                thinkAloudProblem = error.description
            }
        }
    }

    mutating func run() async -> DeviceReport {
        if let thinkAloudProblem {
            report.recordingProblem = thinkAloudProblem
            return report
        }
        let clock = ContinuousClock()
        let start = clock.now
        let stopGenerating = options.duration.map { start + .seconds($0) }
        // Events are numbered when they go into the outbox (`stream.next()`), not ahead, so that media
        // chunks recorded meanwhile take their seqs in order.
        var generating = true
        var eventsGenerated = 0
        var connection: DeviceConnection?
        var backoff = Backoff(options.reconnectDelays)
        var nextAttempt = start
        var drainDeadline: ContinuousClock.Instant?
        var lastEventTime = 0.0

        while !Task.isCancelled {
            // The connection: notice its loss, or make one when it is time.
            if let lost = connection, lost.isClosed {
                apply(lost.takeReplies())
                outbox.connectionLost()
                connection = nil
                report.disconnects += 1
                nextAttempt = clock.now + .seconds(backoff.delay())
            }
            if connection == nil, clock.now >= nextAttempt {
                do {
                    let fresh = try await DeviceConnection.connect(to: server, timeout: .seconds(2))
                    try await fresh.write([options.hello(of: stream.profile)])
                    connection = fresh
                    report.connections += 1
                    backoff.reset()
                } catch {
                    report.lastProblem = "cannot connect to \(server): \(error)"
                    nextAttempt = clock.now + .seconds(backoff.delay())
                }
            }
            if let connection { apply(connection.takeReplies()) }

            // Generate what is due, while the buffer has room.
            if drainDeadline == nil {
                var made = 0
                while generating, made < Self.batchSize, outbox.hasRoom,
                      due(time: stream.nextTime(), index: eventsGenerated, start: start) <= clock.now {
                    let event = stream.next()
                    outbox.append(event)
                    report.generated += 1
                    report.perClass[event.eventClass.rawValue, default: 0] += 1
                    lastEventTime = event.time
                    made += 1
                    eventsGenerated += 1
                    generating = !generationComplete(eventsGenerated)
                }
                record(until: scenarioTime(since: start, now: clock.now), final: false)
                if !generating || stopGenerating.map({ clock.now >= $0 }) == true {
                    generating = false
                    record(until: max(lastEventTime, scenarioTime(since: start, now: clock.now)), final: true)
                    drainDeadline = clock.now + .seconds(options.ackTimeout)
                }
            }

            // Write everything not yet written on this connection.
            if let connection {
                let batch = outbox.takeUnwritten()
                report.resent += batch.resent
                report.sent += batch.events.count - batch.resent
                // A failed write closes the connection; the next turn notices and reconnects.
                try? await connection.write(batch.events.map(\.bytes))
            }

            if let deadline = drainDeadline {
                let unsettled = outbox.unsettled(selectedBy: welcome)
                if unsettled.awaited == 0 || clock.now >= deadline {
                    report.notSelected = unsettled.notSelected
                    report.unacknowledged = unsettled.awaited
                    break
                }
            }

            var wake = clock.now + Self.pollInterval
            if generating, outbox.hasRoom { wake = min(wake, due(time: stream.nextTime(), index: eventsGenerated, start: start)) }
            try? await Task.sleep(until: wake, clock: clock)
        }

        if let connection {
            try? await connection.write([WireEncoder.goodbye()])
            await connection.close()
        }
        return report
    }

    /// The simulated clock (seconds since the run's start) at `now`: the scenario's time at its speed.
    private func scenarioTime(since start: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Double {
        let elapsed = now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if case .scenario(let speed) = options.pacing { return seconds * speed }
        return seconds
    }

    /// Puts the microphone's (and camera's) parts that are due into the outbox (with `final`, all the rest: the run ends).
    private mutating func record(until now: Double, final: Bool) {
        guard var recorder else { return }
        // After the last parts, or once an encoder failed, there is nothing more to record.
        var recording = !final
        defer { self.recorder = recording ? recorder : nil }
        do {
            try recorder.add(stream.takeSpoken())
        } catch {
            report.recordingProblem = error.description
        }
        var chunks: [WireMedia] = []
        do {
            if final {
                chunks = try recorder.remaining(through: now)
            } else {
                while outbox.hasRoom, let parts = try recorder.advance(until: now) { chunks += parts }
            }
        } catch {
            // The encoder is gone: what was recorded is sent, the rest of the run goes on without the recording.
            report.recordingProblem = error.description
            recording = false
        }
        for chunk in chunks {
            outbox.append(stream.media({ $0 = chunk }, time: chunk.start - stream.epoch))
            report.generated += 1
            report.perClass["media", default: 0] += 1
        }
    }

    /// When the event at `time` on the simulated clock, the `index`-th of the run (from 0), is to be
    /// generated, on the run's clock.
    private func due(time: Double, index: Int, start: ContinuousClock.Instant) -> ContinuousClock.Instant {
        switch options.pacing {
        case .scenario(let speed): start + .seconds(time / speed)
        case .rate(let perSecond): start + .seconds(Double(index) / perSecond)
        case .unlimited: start
        }
    }

    private func generationComplete(_ generated: Int) -> Bool {
        if let limit = options.events { return generated >= limit }
        // Neither a count nor a duration: one pass of the scenario.
        return options.duration == nil && stream.passFinished
    }

    private mutating func apply(_ replies: ServerReplies) {
        if let welcome = replies.welcome {
            self.welcome = welcome
            if !report.sessions.contains(welcome.sessionId) { report.sessions.append(welcome.sessionId) }
        }
        if let seq = replies.acknowledged { report.acknowledged += outbox.acknowledge(through: seq) }
        for seq in replies.rejected where outbox.reject(seq) { report.rejected += 1 }
        if let problem = replies.lastError { report.lastProblem = "the server said: \(problem)" }
    }
}

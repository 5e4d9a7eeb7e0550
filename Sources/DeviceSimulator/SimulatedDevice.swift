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

    init(index: Int, options: SimulationOptions, server: ServerAddress) {
        self.options = options
        self.server = server
        stream = EventStream(options, device: index)
        outbox = Outbox(capacity: options.bufferCapacity)
        report = DeviceReport(deviceId: stream.profile.deviceId, deviceName: stream.profile.hello.deviceName ?? "")
    }

    mutating func run() async -> DeviceReport {
        let clock = ContinuousClock()
        let start = clock.now
        let stopGenerating = options.duration.map { start + .seconds($0) }
        var next: OutgoingEvent? = stream.next()
        var connection: DeviceConnection?
        var backoff = Backoff(options.reconnectDelays)
        var nextAttempt = start
        var drainDeadline: ContinuousClock.Instant?

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
                while let event = next, made < Self.batchSize, outbox.hasRoom, due(event, start: start) <= clock.now {
                    outbox.append(event)
                    report.generated += 1
                    report.perClass[event.eventClass.rawValue, default: 0] += 1
                    made += 1
                    next = generationComplete ? nil : stream.next()
                }
                if next == nil || stopGenerating.map({ clock.now >= $0 }) == true {
                    next = nil
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
            if let event = next, outbox.hasRoom { wake = min(wake, due(event, start: start)) }
            try? await Task.sleep(until: wake, clock: clock)
        }

        if let connection {
            try? await connection.write([WireEncoder.goodbye()])
            await connection.close()
        }
        return report
    }

    /// When the event is to be generated, on the run's clock.
    private func due(_ event: OutgoingEvent, start: ContinuousClock.Instant) -> ContinuousClock.Instant {
        switch options.pacing {
        case .scenario(let speed): start + .seconds(event.time / speed)
        case .rate(let perSecond): start + .seconds(Double(event.seq - 1) / perSecond)
        case .unlimited: start
        }
    }

    private var generationComplete: Bool {
        if let limit = options.events { return report.generated >= limit }
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

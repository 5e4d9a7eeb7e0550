internal import MuEvalCapture
internal import MuEvalWire
internal import WireProtocol

/// One simulated phone for one run: plays its scenario at the chosen pace into a `CaptureManager` of
/// its own, which delivers each event exactly once to the server's session across dropped connections
/// and server restarts. The simulator is the capture library's first client: everything on the wire
/// is the library's.
struct SimulatedDevice {
    /// How often the generator looks again while the queue is full or the microphone records.
    private static let pollInterval = Duration.milliseconds(5)
    /// Events generated per turn of the loop at most.
    private static let batchSize = 256

    let options: SimulationOptions
    let server: ServerAddress
    let security: (any ConnectionSecurity)?
    private var stream: EventStream
    private var report: DeviceReport
    /// The microphone, when the tester thinks aloud.
    private var recorder: ThinkAloudRecorder?
    private var thinkAloudProblem: String?
    private let capture = CaptureManager()

    init(index: Int, options: SimulationOptions, server: ServerAddress, security: (any ConnectionSecurity)?) {
        self.options = options
        self.server = server
        self.security = security
        stream = EventStream(options, device: index)
        report = DeviceReport(deviceId: stream.profile.deviceId, deviceName: stream.profile.hello.device.name ?? "")
        if options.behaviour.thinksAloud {
            do {
                recorder = try ThinkAloudRecorder(options: options.thinkAloud, epoch: stream.epoch, device: stream.profile.deviceId)
            } catch {
                thinkAloudProblem = error.description
            }
        }
    }

    /// The library as this phone: its hello, the server, seqs from 1 (each run is a new device run, and
    /// runs repeat byte for byte; with a spool they continue after its backlog), the simulator's
    /// buffer and patience.
    private var configuration: CaptureConfiguration {
        var configuration = CaptureConfiguration(device: stream.profile.hello)
        configuration.token = options.token
        configuration.pairingCode = options.pairingCode
        configuration.invitation = options.invitation
        configuration.server = .address(server)
        configuration.security = security
        configuration.firstSeq = 1
        configuration.spoolDirectory = options.spoolDirectory
        configuration.limits.capacity = options.bufferCapacity
        configuration.limits.reconnectDelays = options.reconnectDelays
        configuration.connectTimeout = 2
        configuration.stopTimeout = options.ackTimeout
        return configuration
    }

    mutating func run() async -> DeviceReport {
        if let thinkAloudProblem {
            report.recordingProblem = thinkAloudProblem
            return report
        }
        do {
            try capture.startCapture(configuration)
        } catch {
            report.lastProblem = error.description
            return report
        }
        if options.invitation != nil {
            // The tester does what the server says: nothing is played before its welcome.
            guard await receiveTasks() else {
                await capture.stopCapture(timeout: 1)
                return report
            }
        }
        let clock = ContinuousClock()
        let start = clock.now
        let stopGenerating = options.duration.map { start + .seconds($0) }
        var generating = true
        var eventsGenerated = 0
        var lastEventTime = 0.0

        while generating, !Task.isCancelled {
            // Generate what is due while the queue has room: the simulated tester waits for a full
            // queue rather than lose events (an app would drop them, `DropPolicy`).
            var made = 0
            // An event due after the duration is never made, however late this loop runs (a stalled
            // process would otherwise catch up a whole batch past the end).
            while generating, made < Self.batchSize, capture.hasRoom,
                  case let dueAt = due(time: stream.nextTime(), index: eventsGenerated, start: start),
                  dueAt <= clock.now, stopGenerating.map({ dueAt < $0 }) ?? true {
                let event = stream.next()
                capture.record(event.captureEvent(epoch: stream.epoch))
                report.generated += 1
                report.perClass[event.eventClass.rawValue, default: 0] += 1
                lastEventTime = event.time
                made += 1
                eventsGenerated += 1
                generating = !generationComplete(eventsGenerated)
            }
            record(until: scenarioTime(since: start, now: clock.now), final: false)
            if stopGenerating.map({ clock.now >= $0 }) == true { generating = false }
            guard generating else { break }
            var wake = clock.now + Self.pollInterval
            if recorder == nil, capture.hasRoom { wake = due(time: stream.nextTime(), index: eventsGenerated, start: start) }
            try? await Task.sleep(until: wake, clock: clock)
        }
        record(until: max(lastEventTime, scenarioTime(since: start, now: clock.now)), final: true)

        guard let summary = await capture.stopCapture(timeout: options.ackTimeout) else { return report }
        let statistics = summary.statistics
        report.sent = statistics.sent
        report.resent = statistics.resent
        report.acknowledged = statistics.acknowledged
        report.rejected = statistics.refused
        report.connections = statistics.connections
        report.disconnects = statistics.disconnects
        report.sessions = statistics.sessions
        report.lastProblem = statistics.lastProblem
        report.unacknowledged = summary.unacknowledged
        report.notSelected = summary.notSelected
        return report
    }

    /// Waits for the server's welcome and plays its tasks; false, with the reason in the report, when the server
    /// refuses the hello (the invitation) or says nothing within `welcomeTimeout`.
    private mutating func receiveTasks() async -> Bool {
        switch await Self.firstWelcome(of: capture, within: options.welcomeTimeout) {
        case .study(let study):
            report.questionnaire = study.questionnaire
            let tasks = AssignedTask.plan(study.tasks.map(\.name), scenario: options.scenario, behaviour: options.behaviour)
            report.tasks = tasks
            // A session without tasks: the scenario's own, marked by the app as without an invitation.
            if !tasks.isEmpty { stream.assign(tasks) }
            return true
        case .refused(let reason):
            report.invitationProblem = "the server refused the invitation: \(reason)"
        case .timedOut:
            report.invitationProblem = "no welcome from the server within \(options.welcomeTimeout) s"
                + (capture.statistics?.lastProblem.map { " (last problem: \($0))" } ?? "")
        }
        return false
    }

    private enum Welcomed: Sendable {
        case study(StudyTasks)
        case refused(String)
        case timedOut
    }

    /// The first of: the welcome's tasks, a refused hello (an `<error>` with no seq), the end of `seconds`.
    private static func firstWelcome(of capture: CaptureManager, within seconds: Double) async -> Welcomed {
        await withTaskGroup(of: Welcomed?.self) { group in
            group.addTask {
                await capture.waitForStudyTasks(timeout: seconds).map(Welcomed.study) ?? .timedOut
            }
            group.addTask {
                for await problem in capture.problems {
                    if case .refused(nil, let reason) = problem { return .refused(reason) }
                }
                return nil
            }
            defer { group.cancelAll() }
            while let next = await group.next() {
                if let next { return next }
            }
            return .timedOut
        }
    }

    /// The simulated clock (seconds since the run's start) at `now`: the scenario's time at its speed.
    private func scenarioTime(since start: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Double {
        let elapsed = now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if case .scenario(let speed) = options.pacing { return seconds * speed }
        return seconds
    }

    /// Records the microphone's (and camera's) parts that are due (with `final`, all the rest: the run ends).
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
                while capture.hasRoom, let parts = try recorder.advance(until: now) { chunks += parts }
            }
        } catch {
            // The encoder is gone: what was recorded is sent, the rest of the run goes on without the recording.
            report.recordingProblem = error.description
            recording = false
        }
        for chunk in chunks {
            capture.record(media: chunk)
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
}

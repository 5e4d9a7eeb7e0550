internal import MuEvalAsync
public import MuEvalWire
internal import NIOConcurrencyHelpers
internal import NIOPosix

/// What reaches the app about its delivery (`CaptureManager.problems`).
public enum CaptureProblem: Sendable, Equatable {
    /// The server refused a message for good (`<error>` with its seq).
    case refused(seq: Int64?, reason: String)
    /// The server failed to store a range of messages; they are sent again.
    case notStored(reason: String)
    case connection(String)
    /// The queue was full: this many messages were dropped so far (said once per full spell).
    case dropped(total: Int)
    case spool(String)
}

/// What `stopCapture` reports.
public struct CaptureSummary: Sendable, Equatable {
    public var statistics: DeliveryStateMachine.Statistics
    /// Messages the session records that were neither acknowledged nor refused at the end (with a
    /// spool, they are delivered on the next start).
    public var unacknowledged: Int
    /// Messages pending that the session does not record (its selection), so never awaited.
    public var notSelected: Int
}

/// The library's facade, the thesis's `MFCaptureManager`: `CaptureManager.shared.startCapture()` finds
/// a capture server, connects and starts the sensors; the event API records; `stopCapture()` delivers
/// what is left and says goodbye.
///
/// Recording never blocks the calling thread: it takes a lock for as long as the event is encoded,
/// puts it in the bounded queue (`DeliveryStateMachine`) and wakes the library's task, which spools,
/// connects, writes and reads the server's replies. An instance records as one device; the shared one
/// is the app's, the simulator makes one per simulated phone.
public final class CaptureManager: Sendable {
    public static let shared = CaptureManager()

    struct Run {
        var machine: DeliveryStateMachine
        let configuration: CaptureConfiguration
        var clock: CaptureClock
        /// The connection attempt or connection whose replies count, and the connection once made.
        var connectionID = 0
        var connection: CaptureConnection?
        /// It closed before it was registered as connected.
        var lostEarly = false
        /// A `<welcome>` came: the driver switches the sensors.
        var sensorsDue = false
        /// The study's tasks as the last `<welcome>` told them; nil before the first.
        var study: StudyTasks?
        var saidFull = false
        /// Wakes the driver: any number of rings before it waits count as one.
        var rung = false

        /// The driver's wait: it takes the ring.
        static func takeRing(_ run: inout Run?) -> Bool {
            guard run?.rung == true else { return false }
            run!.rung = false
            return true
        }
    }

    /// The run, and those who wait on it (the driver for a ring, callers of `waitForRoom` for room).
    private let run = AsyncCondition<Run?>(nil)
    private let task = NIOLockedValueBox<Task<CaptureSummary, Never>?>(nil)
    public let problems: AsyncStream<CaptureProblem>
    private let problemSink: AsyncStream<CaptureProblem>.Continuation
    /// The study's tasks and questionnaire: from the first `<welcome>` of each `startCapture` (empty tasks
    /// when the session has none), then again only when a later welcome (after a reconnect) changes them.
    public let studyTasks: AsyncStream<StudyTasks>
    private let studySink: AsyncStream<StudyTasks>.Continuation

    public init() {
        (problems, problemSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(256))
        (studyTasks, studySink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(16))
    }

    // MARK: Starting and stopping

    /// Starts recording as `configuration` says. Throws when capture is already started or the spool
    /// cannot be opened (another process records as this device); connecting is retried in the
    /// background, with `problems` saying why it fails.
    public func startCapture(_ configuration: CaptureConfiguration = CaptureConfiguration()) throws(CaptureError) {
        // Before the spool: this process holds it while capturing, which would read as another one's.
        guard !isCapturing else { throw .alreadyCapturing }
        let spool = try configuration.spoolDirectory.map { directory throws(CaptureError) in
            try CaptureSpool(directory: directory, deviceId: configuration.device.deviceId)
        }
        let wall = CaptureClock.wallNow()
        // Never below what the spool ever held: a configured first seq (the simulator's 1) after a
        // delivered backlog would otherwise repeat seqs the server already stored.
        let firstSeq = max(configuration.firstSeq ?? Int64(wall * 1e6), (spool?.highestSeq ?? 0) + 1)
        var machine = DeliveryStateMachine(limits: configuration.limits, firstSeq: firstSeq, spooling: spool != nil)
        if let spool { machine.restore(spool.backlog) }
        let started = run.withState { run -> Bool in
            guard run == nil else { return false }
            run = Run(machine: machine, configuration: configuration, clock: CaptureClock(wall: wall, monotonic: CaptureClock.monotonicNow()))
            run?.sensorsDue = true
            return true
        }
        guard started else { throw .alreadyCapturing }
        let driver = Driver(manager: self, configuration: configuration, spool: spool)
        task.withLockedValue { $0 = Task.detached { await driver.run() } }
    }

    /// Delivers what is pending (waiting up to `timeout`, default the configuration's `stopTimeout`),
    /// says goodbye and stops the sensors. With a spool, what was not delivered is on the next start.
    @discardableResult
    public func stopCapture(timeout: Double? = nil) async -> CaptureSummary? {
        let stopping = run.withState { run -> Bool in
            guard run != nil else { return false }
            run!.machine.stop(deadline: CaptureClock.monotonicNow() + (timeout ?? run!.configuration.stopTimeout))
            return true
        }
        guard stopping, let running = task.withLockedValue({ $0 }) else { return nil }
        ring()
        // A write the peer never takes must not outlast the deadline: closing the connection ends it.
        let grace = (timeout ?? run.withState { $0?.configuration.stopTimeout ?? 0 }) + 1
        let watchdog = Task {
            try await Task.sleep(for: .seconds(grace))
            await self.run.withState { $0?.connection }?.close()
        }
        let summary = await running.value
        watchdog.cancel()
        task.withLockedValue { $0 = nil }
        return summary
    }

    /// Whether capture is started.
    public var isCapturing: Bool { run.withState { $0 != nil } }

    public var statistics: DeliveryStateMachine.Statistics? { run.withState { $0?.machine.statistics } }

    // MARK: Recording

    /// Records an event (ignored when capture is not started): it gets the next seq and, unless it has
    /// one, the time stamp of now.
    public func record(_ event: CaptureEvent) {
        enqueue(.event(eventClass: event.eventClass.rawValue, sensor: event.sensor)) { seq, clock in
            event.encoded(seq: seq, timestamp: event.timestamp ?? clock.now())
        }
    }

    /// Records a chunk of a media stream (think-aloud audio, face video) in the same sequence.
    public func record(media chunk: WireMedia) {
        enqueue(.media(chunk.kind)) { seq, _ in
            var numbered = chunk
            numbered.seq = seq
            return WireEncoder.media(numbered)
        }
    }

    public func touch(_ phase: CaptureEvent.TouchPhase, x: Double, y: Double, view: String) {
        record(.touch(phase, x: x, y: y, view: view))
    }

    public func viewAppeared(_ view: String, stack: [String], screenshot: [UInt8]? = nil) {
        record(.viewAppeared(view, stack: stack, screenshot: screenshot))
    }

    public func buttonPressed(_ title: String?, id: String, view: String) {
        record(.buttonPressed(title, id: id, view: view))
    }

    public func screenshot(png: [UInt8], view: String? = nil) {
        record(.screenshot(png, format: .png, view: view))
    }

    public func screenshot(jpeg: [UInt8], view: String? = nil) {
        record(.screenshot(jpeg, format: .jpeg, view: view))
    }

    /// `[monitor beginEvent: @"Edit blog posting"]`: a task starts.
    public func beginEvent(_ name: String) {
        record(.marker(.begin, name))
    }

    public func endEvent(_ name: String) {
        record(.marker(.end, name))
    }

    /// What the last `<welcome>` said of the study; nil before the first of this capture.
    public var currentStudyTasks: StudyTasks? { run.withState { $0?.study } }

    /// Waits up to `timeout` for the first `<welcome>` of this capture (at once when it came) and returns what it
    /// said of the study; nil when none came in time, or capture is not started. Leaves `studyTasks` to its reader.
    public func waitForStudyTasks(timeout: Double) async -> StudyTasks? {
        // As NIO's timers take an app's seconds: at most a day, no wait for a non-number or a negative.
        let wait = Duration.seconds(timeout > 0 ? min(timeout, 86_400) : 0)
        guard await run.wait(until: { $0 == nil || $0!.study != nil }, timeout: wait) else { return nil }
        return currentStudyTasks
    }

    /// The tester begins one of the study's tasks (their own mark, `by` = `tester`: docs/CAPTURE-LIBRARY.md).
    /// Throws for a task the study does not have, once the server sent the study's tasks.
    public func beginTask(_ name: String) throws(CaptureError) {
        try markTask(.begin, name)
    }

    /// The tester says they are done with the task.
    public func endTask(_ name: String) throws(CaptureError) {
        try markTask(.end, name)
    }

    /// The tester gives the task up: the analysis counts the attempt as abandoned ("gave up").
    public func giveUpTask(_ name: String) throws(CaptureError) {
        try markTask(.giveUp, name)
    }

    private func markTask(_ mark: CaptureEvent.TaskMark, _ name: String) throws(CaptureError) {
        // No tasks (yet, or a session without them): nothing to check the name against.
        if let tasks = currentStudyTasks?.tasks, !tasks.isEmpty, !tasks.contains(where: { $0.name == name }) {
            throw .unknownTask(name, tasks: tasks.map(\.name))
        }
        record(.taskMark(mark, name))
    }

    /// Whether the queue has room now.
    public var hasRoom: Bool { run.withState { $0?.machine.hasRoom ?? true } }

    /// Returns when the queue has room (at once when it has, or capture is not started): for a caller
    /// that would rather wait than have messages dropped (the simulator's `--rate max`).
    public func waitForRoom() async {
        await run.wait { run in run?.machine.hasRoom ?? true }
    }

    /// `encode` writes the message with its seq, reading the clock only when it needs the time.
    private func enqueue(_ kind: Selectable, _ encode: (Int64, CaptureClock) -> [UInt8]) {
        let dropped = run.withState { run -> Int? in
            guard run != nil else { return nil }
            let clock = run!.clock
            var dropped: Int?
            if run!.machine.record(kind: kind, { encode($0, clock) }) != nil {
                run!.saidFull = false
            } else if !run!.saidFull {
                run!.saidFull = true
                dropped = run!.machine.statistics.dropped
            }
            run!.rung = true
            return dropped
        }
        if let dropped { problemSink.yield(.dropped(total: dropped)) }
    }

    // MARK: The driver's side

    /// Wakes the driver.
    func ring() {
        run.withState { $0?.rung = true }
    }

    /// Waits for a ring, or until `deadline` (monotonic seconds).
    func waitForRing(until deadline: Double?) async {
        let timer = deadline.map { deadline in
            MultiThreadedEventLoopGroup.singleton.next().scheduleTask(in: .capped(seconds: deadline - CaptureClock.monotonicNow())) {
                self.ring()
            }
        }
        await run.wait(until: Run.takeRing)
        timer?.cancel()
    }

    func withRun<T>(_ body: (inout Run) -> T) -> T {
        run.withState { body(&$0!) }
    }

    func report(_ problem: CaptureProblem) {
        problemSink.yield(problem)
    }

    /// A reply on connection `id`.
    func received(_ message: WireMessage, on id: Int) {
        var study: StudyTasks?
        let problem = run.withState { run -> CaptureProblem? in
            guard run != nil, run!.connectionID == id else { return nil }
            var problem: CaptureProblem?
            switch message {
            case .ack(let seq): run!.machine.acknowledged(through: seq)
            case .welcome(let welcome):
                run!.machine.welcomed(welcome)
                run!.sensorsDue = true
                let told = StudyTasks(welcome)
                if told != run!.study {
                    run!.study = told
                    study = told
                }
            case .error(let error):
                let reason = run!.machine.refused(error, now: CaptureClock.monotonicNow(), jitter: .random(in: 0...1)) ?? error.reason
                problem = error.fromSeq == nil ? .refused(seq: error.seq, reason: reason) : .notStored(reason: reason)
            case .hello, .event, .media, .goodbye: break
            }
            // The driver; those waiting for room see it when there is some now.
            run!.rung = true
            return problem
        }
        if let problem { problemSink.yield(problem) }
        if let study { studySink.yield(study) }
    }

    /// Connection `id` closed.
    func closed(_ id: Int) {
        run.withState { run in
            guard run != nil, run!.connectionID == id else { return }
            if case .connected = run!.machine.link {
                run!.machine.connectionLost("the connection closed", now: CaptureClock.monotonicNow(), jitter: .random(in: 0...1))
            } else {
                run!.lostEarly = true
            }
            run!.rung = true
        }
    }

    func finished() {
        // Releases those waiting for room.
        run.withState { $0 = nil }
    }
}

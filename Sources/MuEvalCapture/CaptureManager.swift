internal import NIOConcurrencyHelpers
internal import NIOPosix
public import WireProtocol
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Time stamps from the wall clock, ordered by a monotonic one: read once at `startCapture`, the wall
/// clock then advances with the monotonic clock, so that a clock change on the phone mid-session
/// neither reorders nor stretches it.
public struct CaptureClock: Sendable, Equatable {
    private let wallAtStart: Double
    private let monotonicAtStart: Double

    public init(wall: Double, monotonic: Double) {
        wallAtStart = wall
        monotonicAtStart = monotonic
    }

    /// Seconds since 1970 now.
    public func now() -> Double {
        timestamp(monotonic: Self.monotonicNow())
    }

    /// Seconds since 1970 at the monotonic time `monotonic`.
    public func timestamp(monotonic: Double) -> Double {
        wallAtStart + (monotonic - monotonicAtStart)
    }

    /// Seconds on a clock that never jumps (it goes on while the device sleeps).
    public static func monotonicNow() -> Double {
        let elapsed = ContinuousClock.now - reference
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    private static let reference = ContinuousClock.now

    public static func wallNow() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

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

    fileprivate struct Run {
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
        var saidFull = false
        var roomWaiters: [CheckedContinuation<Void, Never>] = []
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?

        /// A ring, under the lock the caller holds: the driver's waiter to resume after it, if it waits.
        /// Any number of rings before it waits count as one.
        mutating func ring() -> CheckedContinuation<Void, Never>? {
            defer { waiter = nil }
            if waiter == nil { rung = true }
            return waiter
        }
    }

    private let run = NIOLockedValueBox<Run?>(nil)
    private let task = NIOLockedValueBox<Task<CaptureSummary, Never>?>(nil)
    public let problems: AsyncStream<CaptureProblem>
    private let problemSink: AsyncStream<CaptureProblem>.Continuation

    public init() {
        (problems, problemSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(256))
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
        let started = run.withLockedValue { run -> Bool in
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
        let stopping = run.withLockedValue { run -> Bool in
            guard run != nil else { return false }
            run!.machine.stop(deadline: CaptureClock.monotonicNow() + (timeout ?? run!.configuration.stopTimeout))
            return true
        }
        guard stopping, let running = task.withLockedValue({ $0 }) else { return nil }
        ring()
        // A write the peer never takes must not outlast the deadline: closing the connection ends it.
        let grace = (timeout ?? run.withLockedValue { $0?.configuration.stopTimeout ?? 0 }) + 1
        let watchdog = Task {
            try await Task.sleep(for: .seconds(grace))
            await self.run.withLockedValue { $0?.connection }?.close()
        }
        let summary = await running.value
        watchdog.cancel()
        task.withLockedValue { $0 = nil }
        return summary
    }

    /// Whether capture is started.
    public var isCapturing: Bool { run.withLockedValue { $0 != nil } }

    public var statistics: DeliveryStateMachine.Statistics? { run.withLockedValue { $0?.machine.statistics } }

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

    /// Whether the queue has room now.
    public var hasRoom: Bool { run.withLockedValue { $0?.machine.hasRoom ?? true } }

    /// Returns when the queue has room (at once when it has, or capture is not started): for a caller
    /// that would rather wait than have messages dropped (the simulator's `--rate max`).
    public func waitForRoom() async {
        await withCheckedContinuation { continuation in
            let now = run.withLockedValue { run -> Bool in
                guard run != nil, !run!.machine.hasRoom else { return true }
                run!.roomWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// `encode` writes the message with its seq, reading the clock only when it needs the time.
    private func enqueue(_ kind: Selectable, _ encode: (Int64, CaptureClock) -> [UInt8]) {
        let (dropped, waiter) = run.withLockedValue { run -> (Int?, CheckedContinuation<Void, Never>?) in
            guard run != nil else { return (nil, nil) }
            let clock = run!.clock
            var dropped: Int?
            if run!.machine.record(kind: kind, { encode($0, clock) }) != nil {
                run!.saidFull = false
            } else if !run!.saidFull {
                run!.saidFull = true
                dropped = run!.machine.statistics.dropped
            }
            return (dropped, run!.ring())
        }
        waiter?.resume()
        if let dropped { problemSink.yield(.dropped(total: dropped)) }
    }

    // MARK: The driver's side

    /// Wakes the driver.
    fileprivate func ring() {
        run.withLockedValue { $0?.ring() }?.resume()
    }

    /// Waits for a ring, or until `deadline` (monotonic seconds).
    fileprivate func waitForRing(until deadline: Double?) async {
        let timer = deadline.map { deadline in
            MultiThreadedEventLoopGroup.singleton.next().scheduleTask(in: .nanoseconds(Int64(max(deadline - CaptureClock.monotonicNow(), 0) * 1e9))) {
                self.ring()
            }
        }
        await withCheckedContinuation { continuation in
            let now = run.withLockedValue { run -> Bool in
                if run!.rung {
                    run!.rung = false
                    return true
                }
                run!.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
        timer?.cancel()
    }

    fileprivate func withRun<T>(_ body: (inout Run) -> T) -> T {
        run.withLockedValue { body(&$0!) }
    }

    fileprivate func report(_ problem: CaptureProblem) {
        problemSink.yield(problem)
    }

    /// A reply on connection `id`.
    fileprivate func received(_ message: WireMessage, on id: Int) {
        let (problem, waiters) = run.withLockedValue { run -> (CaptureProblem?, [CheckedContinuation<Void, Never>]) in
            guard run != nil, run!.connectionID == id else { return (nil, []) }
            var problem: CaptureProblem?
            switch message {
            case .ack(let seq): run!.machine.acknowledged(through: seq)
            case .welcome(let welcome):
                run!.machine.welcomed(welcome)
                run!.sensorsDue = true
            case .error(let error):
                let reason = run!.machine.refused(error, now: CaptureClock.monotonicNow(), jitter: .random(in: 0...1)) ?? error.reason
                problem = error.fromSeq == nil ? .refused(seq: error.seq, reason: reason) : .notStored(reason: reason)
            case .hello, .event, .media, .goodbye: break
            }
            // The driver, and those waiting for room when there is some now.
            var waiters = run!.ring().map { [$0] } ?? []
            if run!.machine.hasRoom {
                waiters += run!.roomWaiters
                run!.roomWaiters = []
            }
            return (problem, waiters)
        }
        for waiter in waiters { waiter.resume() }
        if let problem { problemSink.yield(problem) }
    }

    /// Connection `id` closed.
    fileprivate func closed(_ id: Int) {
        run.withLockedValue { run -> CheckedContinuation<Void, Never>? in
            guard run != nil, run!.connectionID == id else { return nil }
            if case .connected = run!.machine.link {
                run!.machine.connectionLost("the connection closed", now: CaptureClock.monotonicNow(), jitter: .random(in: 0...1))
            } else {
                run!.lostEarly = true
            }
            return run!.ring()
        }?.resume()
    }

    fileprivate func finished() {
        let waiters = run.withLockedValue { run -> [CheckedContinuation<Void, Never>] in
            defer { run = nil }
            return run?.roomWaiters ?? []
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// The library's task for one capture: carries out what the delivery state machine says.
private struct Driver: Sendable {
    let manager: CaptureManager
    let configuration: CaptureConfiguration
    let spool: CaptureSpool?

    func run() async -> CaptureSummary {
        var connection: CaptureConnection?
        var running: [ObjectIdentifier: any CaptureSensor] = [:]
        while true {
            switchSensors(&running)
            let action = manager.withRun { $0.machine.nextAction(now: CaptureClock.monotonicNow()) }
            switch action {
            case .connect:
                connection = await connect()
            case .spool(let seqs):
                let messages = manager.withRun { run in seqs.compactMap { seq in run.machine.message(seq).map { (seq, $0.bytes) } } }
                do {
                    try spool?.append(messages)
                    manager.withRun { $0.machine.spooled(through: seqs.last ?? 0) }
                } catch {
                    spoolFailed(error)
                }
            case .forgetSpooled(let seq):
                do { try spool?.forget(through: seq) } catch { spoolFailed(error) }
            case .write(let hello, let seqs):
                let messages = manager.withRun { run in
                    (hello ? [configuration.hello] : []) + seqs.compactMap { run.machine.message($0)?.bytes }
                }
                // A failed write closes the connection, and its close tells the machine.
                try? await connection?.write(messages, timeout: configuration.limits.ackTimeout)
                manager.withRun { $0.machine.written() }
            case .replaceConnection:
                await connection?.close()
            case .sayGoodbye:
                try? await connection?.write([WireEncoder.goodbye()], timeout: 1)
                await connection?.close()
                connection = nil
            case .finish:
                await connection?.close()
                for sensor in running.values { sensor.stop() }
                let summary = manager.withRun { run in
                    let unsettled = run.machine.unsettled
                    return CaptureSummary(statistics: run.machine.statistics, unacknowledged: unsettled.awaited, notSelected: unsettled.notSelected)
                }
                manager.finished()
                return summary
            case .wait(let until):
                await manager.waitForRing(until: until)
            }
        }
    }

    private func connect() async -> CaptureConnection? {
        let id = manager.withRun { run in
            run.connectionID += 1
            run.lostEarly = false
            return run.connectionID
        }
        do {
            let server: ServerAddress
            switch configuration.server {
            case .address(let address): server = address
            case .discover(let name):
                var found = try await ServerDiscovery.find(
                    name: name, timeout: configuration.browseTimeout,
                    hasCredential: configuration.token != nil || configuration.device.token != nil
                        || configuration.pairingCode != nil || configuration.device.pairing != nil,
                    alwaysTLS: configuration.requireTLS, browser: configuration.browser)
                found.tls = found.tls || configuration.requireTLS
                server = found
            }
            let manager = manager
            let fresh = try await CaptureConnection.connect(
                to: server, security: configuration.security, timeout: configuration.connectTimeout,
                received: { manager.received($0, on: id) }, closed: { manager.closed(id) })
            manager.withRun { run in
                run.connection = fresh
                run.machine.connected()
                if run.lostEarly {
                    run.machine.connectionLost("the connection closed at once", now: CaptureClock.monotonicNow(), jitter: .random(in: 0...1))
                }
            }
            return fresh
        } catch {
            let reason = (error as? CaptureError).map(\.description) ?? "cannot connect to \(describe(configuration.server)): \(error)"
            manager.withRun { $0.machine.connectFailed(reason, now: CaptureClock.monotonicNow(), jitter: .random(in: 0...1)) }
            manager.report(.connection(reason))
            return nil
        }
    }

    private func describe(_ server: CaptureConfiguration.Server) -> String {
        switch server {
        case .address(let address): address.description
        case .discover(let name?): "the capture server \"\(name)\""
        case .discover(nil): "a capture server"
        }
    }

    private func spoolFailed(_ error: any Error) {
        manager.withRun { $0.machine.spoolFailed("\(error)") }
        manager.report(.spool("\(error)"))
    }

    /// Starts the selected sensors and stops the others, when a `<welcome>` (or the start) asks.
    private func switchSensors(_ running: inout [ObjectIdentifier: any CaptureSensor]) {
        let selection = manager.withRun { run -> SensorSelection?? in
            guard run.sensorsDue else { return .none }
            run.sensorsDue = false
            return .some(run.machine.selection)
        }
        guard case .some(let current) = selection else { return }
        for sensor in configuration.sensors {
            let id = ObjectIdentifier(sensor)
            let wanted = current.map { sensor.produces.isSelected(by: $0) } ?? true
            if wanted, running[id] == nil {
                running[id] = sensor
                sensor.start(SensorRecorder(manager: manager, sensor: sensor.produces.sensorName))
            } else if !wanted, let stopped = running.removeValue(forKey: id) {
                stopped.stop()
            }
        }
    }
}

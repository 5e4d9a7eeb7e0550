internal import DequeModule
internal import MuEvalCapture
public import MuEvalWire
internal import WireProtocol

/// An event numbered and encoded as the capture library sends it, for writers without a server
/// (`--dry-run`, session files for tests, benchmarks).
public struct OutgoingEvent: Sendable, Equatable {
    public let seq: Int64
    public let eventClass: EventClass
    /// Seconds since the device's run started, on the simulated clock.
    public let time: Double
    public let bytes: [UInt8]
}

/// The events of one simulated device: pass after pass of its scenario.
public struct EventStream {
    public let profile: DeviceProfile
    private var player: ScenarioPlayer
    private var pass: Deque<SimulatedEvent> = []
    /// The seq of the last `nextEncoded` event.
    private var lastSeq: Int64 = 0
    /// Device time at the run's start, in seconds since 1970.
    public let epoch: Double
    /// Lines said in passes generated so far and not yet taken (`takeSpoken`).
    private var spoken: [SpokenLine] = []

    /// The stream of device `deviceIndex` (from 0) playing `scenario` as `behaviour` says; device time starts at `epoch`.
    public init(scenario: Scenario, deviceIndex: Int, seed: UInt64, epoch: Double, behaviour: ParticipantBehaviour = .ideal) {
        let random = SeededGenerator(seed: seed).derived(UInt64(deviceIndex) + 1)
        profile = DeviceProfile(index: deviceIndex, scenario: scenario, random: random)
        player = ScenarioPlayer(scenario: scenario, random: random, behaviour: behaviour)
        self.epoch = epoch
    }

    /// The stream of device `index` of a run.
    public init(_ options: SimulationOptions, device index: Int) {
        self.init(scenario: options.scenario, deviceIndex: index, seed: options.seed, epoch: options.epoch, behaviour: options.behaviour)
    }

    /// Plays the server's tasks in its order (`--invitation`), with the tester's own marks, from the next pass on.
    public mutating func assign(_ tasks: [AssignedTask]) {
        player.assigned = tasks
    }

    /// The simulated time of the next event (a new pass is generated when needed).
    public mutating func nextTime() -> Double {
        fillPass()
        return pass[0].time
    }

    private mutating func fillPass() {
        if pass.isEmpty {
            pass = Deque(player.nextPass())
            spoken += player.spoken
        }
    }

    /// The next event; a new pass starts when the previous one is used up.
    public mutating func next() -> SimulatedEvent {
        fillPass()
        return pass.removeFirst()
    }

    /// The next event numbered (from 1) and encoded, as the capture library would send it.
    public mutating func nextEncoded() -> OutgoingEvent {
        let event = next()
        lastSeq += 1
        return OutgoingEvent(seq: lastSeq, eventClass: event.eventClass, time: event.time,
                             bytes: event.captureEvent(epoch: epoch).encoded(seq: lastSeq, timestamp: epoch + event.time))
    }

    /// The lines said in the passes generated since the last call.
    public mutating func takeSpoken() -> [SpokenLine] {
        defer { spoken = [] }
        return spoken
    }

    /// Whether the current pass has no events left (a one-pass run ends here).
    public var passFinished: Bool { pass.isEmpty }
}

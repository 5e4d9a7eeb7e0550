internal import DequeModule
public import WireProtocol

/// An event ready for the wire: its encoded bytes and what the sender needs to account for it.
public struct OutgoingEvent: Sendable, Equatable {
    public let seq: Int64
    /// For a media chunk, `.custom`: its `media` kind is what matters.
    public let eventClass: EventClass
    public let sensor: String?
    /// Set for a `<media>` chunk (think-aloud audio) rather than an event.
    public var media: MediaKind? = nil
    /// Seconds since the device's run started, on the simulated clock; pacing follows it.
    public let time: Double
    public let bytes: [UInt8]
}

/// The events of one simulated device, numbered and encoded: pass after pass of its scenario.
public struct EventStream {
    public let profile: DeviceProfile
    private var player: ScenarioPlayer
    private var pass: Deque<SimulatedEvent> = []
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

    /// The next event, numbered now; a new pass starts when the previous one is used up.
    public mutating func next() -> OutgoingEvent {
        fillPass()
        let event = pass.removeFirst()
        lastSeq += 1
        var sensor: String?
        if case .string(let name)? = event.fields["sensor"] { sensor = name }
        return OutgoingEvent(seq: lastSeq, eventClass: event.eventClass, sensor: sensor, time: event.time,
                             bytes: WireEncoder.event(event.wireFields(seq: lastSeq, epoch: epoch)))
    }

    /// The lines said in the passes generated since the last call.
    public mutating func takeSpoken() -> [SpokenLine] {
        defer { spoken = [] }
        return spoken
    }

    /// A media chunk, numbered in the device's one sequence with its events.
    public mutating func media(_ chunk: (inout WireMedia) -> Void, time: Double) -> OutgoingEvent {
        lastSeq += 1
        var media = WireMedia(stream: "", format: .wav, part: 0, start: 0, duration: nil, seq: lastSeq, bytes: [])
        chunk(&media)
        media.seq = lastSeq
        var event = OutgoingEvent(seq: lastSeq, eventClass: .custom, sensor: media.kind.sensor, time: time, bytes: WireEncoder.media(media))
        event.media = media.kind
        return event
    }

    /// Whether the current pass has no events left (a one-pass run ends here).
    public var passFinished: Bool { pass.isEmpty }
}

internal import MuEvalWire
internal import WireProtocol

/// How a run goes: how many devices, how fast, how long, and how patient the sender is.
public struct SimulationOptions: Sendable {
    public enum Pacing: Sendable, Equatable {
        /// The scenario's own timing (think times, typing), compressed by `speed`.
        case scenario(speed: Double)
        /// A fixed number of events per second per device.
        case rate(Double)
        /// As fast as the connection and the server's acknowledgements allow.
        case unlimited
    }

    public var scenario: Scenario
    public var devices = 1
    public var pacing = Pacing.scenario(speed: 1)
    /// Stop generating after this many events per device; with `duration` also nil: one pass of the scenario.
    public var events: Int?
    /// Stop generating after this many seconds.
    public var duration: Double?
    public var seed: UInt64 = 1
    /// Device time at the start, in seconds since 1970.
    public var epoch: Double
    /// Unacknowledged events a device holds at most; when full, the simulated tester waits.
    public var bufferCapacity = 10_000
    /// How long to wait at the end for the last acknowledgements (and to get the last events out).
    public var ackTimeout = 30.0
    /// The capture library's spool: what a run does not deliver, the next run of the same devices does.
    public var spoolDirectory: String?
    /// Reconnection delays: doubling from the first to the last, with jitter.
    public var reconnectDelays: ClosedRange<Double> = 0.05...2
    /// The server's device token or (to a server without one) a session's pairing code, presented in every `<hello>`.
    public var token: String?
    /// A session's pairing code, presented in every `<hello>` as `pairing`.
    public var pairingCode: String?
    /// A study invitation's code, presented in every `<hello>` as `invitation`: the tester then plays the tasks the
    /// server's `<welcome>` gives, in its order, with their own task marks. One device only (it is single use).
    public var invitation: String?
    /// With `invitation`: how long to wait for the server's welcome (and its tasks) before giving up.
    public var welcomeTimeout = 30.0
    /// How the simulated tester departs from the scenario (failed and abandoned tasks, detours, misclicks, pace);
    /// every device of the run behaves alike. Check it with `ParticipantBehaviour.validate(for:)`.
    public var behaviour = ParticipantBehaviour.ideal
    /// With `behaviour.thinksAloud`: how the tester's voice is made and streamed.
    public var thinkAloud = ThinkAloudOptions()

    public init(scenario: Scenario, epoch: Double) {
        self.scenario = scenario
        self.epoch = epoch
    }
}

extension SimulationOptions {
    /// What the device with `profile` says first on every connection.
    func hello(of profile: DeviceProfile) -> [UInt8] {
        var hello = profile.hello
        hello.token = token
        hello.pairing = pairingCode
        hello.invitation = invitation
        return WireEncoder.hello(hello)
    }
}

public import DeviceSimulator
internal import JournalStorage
internal import SessionModel

/// Session files recorded from muevalsim's scenarios without a daemon: the simulator's own events, in
/// its wire format, stored as muevald stores them.
public enum SimulatedSession {
    /// Device time at which simulated sessions start (a Saturday in February 2011, the thesis's days).
    public static let epoch = 1_298_000_000.0

    /// Writes `passes` passes of a built-in scenario as played by device `deviceIndex` (Jack, Jill, Jane…).
    public static func write(scenario name: String, to path: String, passes: Int = 1, deviceIndex: Int = 0,
                             seed: UInt64 = 1, behaviour: ParticipantBehaviour = .ideal) async throws {
        guard let scenario = BuiltinScenarios.named(name) else { throw SimulatedSessionError.unknownScenario(name) }
        var stream = EventStream(scenario: scenario, deviceIndex: deviceIndex, seed: seed, epoch: epoch, behaviour: behaviour)
        let hello = stream.profile.hello
        let device = DeviceRecord(id: hello.deviceId, device: hello.device, firstSeen: epoch, lastSeen: epoch)
        let owner = hello.device.name?.components(separatedBy: "'").first
        let builder = try JournalBuilder(path: path, name: "\(name) \(owner ?? "")", testUser: owner, device: device)
        var finished = 0
        while finished < passes {
            try builder.add(wire: stream.nextEncoded().bytes)
            if stream.passFinished { finished += 1 }
        }
        try await builder.finish()
    }

    public enum SimulatedSessionError: Error, CustomStringConvertible {
        case unknownScenario(String)

        public var description: String {
            switch self {
            case .unknownScenario(let name): "no built-in scenario \(name); there are \(BuiltinScenarios.names.joined(separator: ", "))"
            }
        }
    }
}

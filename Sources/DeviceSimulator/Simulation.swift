internal import Foundation
public import MuEvalCapture
internal import MuEvalWire
internal import WireProtocol

/// Runs the simulated devices of a run concurrently, each with its own connection and identity.
public enum Simulation {
    /// `security`: TLS for a server that asks for it (`server.tls`).
    public static func run(_ options: SimulationOptions, server: ServerAddress, security: (any ConnectionSecurity)? = nil) async -> SimulationReport {
        let started = ContinuousClock.now
        let devices = await withTaskGroup(of: (Int, DeviceReport).self) { group in
            for index in 0..<options.devices {
                group.addTask {
                    var device = SimulatedDevice(index: index, options: options, server: server, security: security)
                    return (index, await device.run())
                }
            }
            var reports: [(Int, DeviceReport)] = []
            for await report in group { reports.append(report) }
            return reports.sorted { $0.0 < $1.0 }.map(\.1)
        }
        let elapsed = ContinuousClock.now - started
        return SimulationReport(server: server.description, scenario: options.scenario.name, seed: options.seed,
                                seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
                                devices: devices)
    }

    /// The events device `index` sends in a run of `options.events` events, or of one pass without it;
    /// computed without a server, for tests and `--dry-run`.
    public static func plannedEvents(_ options: SimulationOptions, device index: Int) -> [OutgoingEvent] {
        var stream = EventStream(options, device: index)
        var events = [stream.nextEncoded()]
        while options.events.map({ events.count < $0 }) ?? !stream.passFinished { events.append(stream.nextEncoded()) }
        return events
    }
}

extension Simulation {
    /// The `<hello>` device `index` sends.
    public static func hello(_ options: SimulationOptions, device index: Int) -> [UInt8] {
        options.hello(of: EventStream(options, device: index).profile)
    }

    public static var goodbye: [UInt8] { WireEncoder.goodbye() }
}

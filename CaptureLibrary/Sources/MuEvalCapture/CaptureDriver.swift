internal import MuEvalWire

/// The library's task for one capture: carries out what the delivery state machine says.
struct Driver: Sendable {
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
                    hasCredential: configuration.hasCredential,
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

/// Devices coming and going: the capture server's connections ask here for their session.
extension SessionRegistry {
    /// Finds the session a device records into (`SessionLifecycleStateMachine.attach` says how).
    ///
    /// Returns at once, without touching the disk (it is called on an event loop). Opening a new
    /// session writes the catalog (an fsync) and creates a file, so that runs on the catalog queue
    /// and returns `.opening`; `opened` is then called there with the outcome.
    public func attach(_ device: ConnectingDevice, connection: UInt64, deviceToken: String?,
                       pairingLimits: PairingLimits = PairingLimits(), now: Double,
                       opened: @escaping @Sendable (AttachOutcome) -> Void) -> AttachOutcome {
        let outcome = decide { $0.attach(device, connection: connection, deviceToken: deviceToken, limits: pairingLimits, now: now) }
        guard case .opening? = outcome else { return outcome ?? Self.noDecision }
        // In order with the catalog's other writes; a second connection of the same device, queued
        // behind this one, finds the session this one opened.
        catalogQueue.async { [self] in
            opened(openAutomaticSession(for: device, connection: connection, now: now))
        }
        return .opening
    }

    /// Policy `auto`, on the catalog queue: a new session for the device, unless one appeared meanwhile.
    private func openAutomaticSession(for device: ConnectingDevice, connection: UInt64, now: Double) -> AttachOutcome {
        let existing = lock.withLock {
            machine.automaticSessionDue(for: device, connection: connection, now: now).map { perform($0) }
        }
        if let existing { return existing ?? Self.noDecision }
        let outcome: AttachOutcome?
        do {
            let record = try catalog.createSession(name: "auto-\(device.id)", testUser: nil, notes: "opened by the auto policy",
                                                   sensors: [], boundDevice: device.id, now: now)
            let session = try makeSession(record, isAutomatic: true)
            outcome = lock.withLock {
                live[record.id] = session
                return perform(machine.automaticSessionOpened(record, for: device, connection: connection, now: now))
            }
        } catch {
            outcome = decide { $0.automaticSessionFailed(for: device, error: "\(error)") }
        }
        return outcome ?? Self.noDecision
    }

    /// A device's connection ended; `cleanly` when it said goodbye. When it was the session's last
    /// connection, the session is interrupted (with a gap in the recording unless `cleanly`) or,
    /// opened by the `auto` policy, stopped.
    public func detach(_ session: EvaluationSession, connection: UInt64, device: String, cleanly: Bool, now: Double) {
        decide(session) { $0.detached(session.id, connection: connection, device: device, cleanly: cleanly, now: now) }
    }

    /// Never returned: every attach ends in an outcome. Said so rather than trapping.
    private static let noDecision = AttachOutcome.rejected(reason: "the server could not decide on a session for this device")
}

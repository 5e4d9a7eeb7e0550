internal import SessionModel

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
        // behind this one, finds the session this one opened. The machine asks for a session off
        // this thread only for an invitation (when the hello has one) or under the `auto` policy.
        catalogQueue.async { [self] in
            if let code = device.hello?.invitation {
                opened(openInvitedSession(code, for: device, connection: connection, limits: pairingLimits, now: now))
            } else {
                opened(openAutomaticSession(for: device, connection: connection, now: now))
            }
        }
        return .opening
    }

    /// On the catalog queue: the invitation `device` presents, and on its first use a new session of
    /// its study, bound to the device.
    private func openInvitedSession(_ code: String, for device: ConnectingDevice, connection: UInt64, limits: PairingLimits,
                                    now: Double) -> AttachOutcome {
        let invitation: Invitation?
        do {
            invitation = try catalog.invitation(code: code)
        } catch {
            return decide { $0.invitedSessionFailed(for: device, error: "\(error)") } ?? Self.noDecision
        }
        let decision = decide { $0.invitationFound(invitation, code: code, for: device, connection: connection, limits: limits, now: now) }
        guard case .opening? = decision, let invitation else { return decision ?? Self.noDecision }
        var created: SessionRecord?
        let outcome: AttachOutcome?
        do {
            let assignment = StudyAssignment(study: invitation.study, iteration: invitation.iteration, participant: invitation.participant)
            let context = try catalog.studyContext(of: assignment)
            let record = try catalog.createSession(
                name: "\(invitation.study)-\(invitation.participant)", testUser: invitation.participant,
                notes: "opened by the participant's invitation", sensors: [], boundDevice: device.id, study: assignment, now: now)
            created = record
            let session = try makeSession(record, isAutomatic: false, tasks: context.tasks, invitation: code)
            // Bound last: a phone whose session could not be made may try again.
            try catalog.updateInvitation(code: code, status: .accepted, sessionId: record.id, deviceId: device.id)
            session.journal.submit({ try $0.writeStudyContext(context) }, onFailure: logFailure(session))
            outcome = lock.withLock {
                live[record.id] = session
                return perform(machine.invitedSessionOpened(record, invitation: code, for: device, connection: connection, now: now))
            }
        } catch {
            // Not left open in the catalog, where the next start would recover it.
            if var created {
                created.state = .stopped
                created.stopped = now
                try? catalog.update(created)
            }
            outcome = decide { $0.invitedSessionFailed(for: device, error: "\(error)") }
        }
        return outcome ?? Self.noDecision
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
            let session = try makeSession(record, isAutomatic: true, tasks: [])
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

    /// Stops the invited sessions whose device has been away `idleAfter` seconds
    /// (`studies.invited_session_idle`); muevald calls it every few seconds.
    public func stopIdleInvitedSessions(idleAfter: Double, now: Double) {
        decide { $0.idleInvitedSessions(idleAfter: idleAfter, now: now) }
    }

    /// Never returned: every attach ends in an outcome. Said so rather than trapping.
    private static let noDecision = AttachOutcome.rejected(reason: "the server could not decide on a session for this device")
}

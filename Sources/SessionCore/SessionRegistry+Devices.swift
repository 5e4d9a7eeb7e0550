internal import SessionModel

/// Devices coming and going: the capture server's connections ask here for their session.
extension SessionRegistry {
    /// Finds the session a device records into (`SessionLifecycleStateMachine.attach` says how).
    ///
    /// Returns at once, without touching the disk (it is called on an event loop). Looking up an
    /// invitation reads the catalog, and opening a new session writes it (an fsync) and creates a file,
    /// so those run on the catalog queue and this returns `.opening`; `opened` is then called there
    /// with the outcome.
    public func attach(_ device: ConnectingDevice, connection: UInt64, deviceToken: String?,
                       pairingLimits: PairingLimits = PairingLimits(), now: Double,
                       opened: @escaping @Sendable (AttachOutcome) -> Void) -> AttachOutcome {
        let decision = decideAttach { $0.attach(device, connection: connection, deviceToken: deviceToken, limits: pairingLimits, now: now) }
        guard case .open(let opening) = decision else { return decision.outcome }
        // In order with the catalog's other writes; a second connection of the same device, queued
        // behind this one, finds the session this one opened.
        catalogQueue.async { [self] in
            opened(open(opening, for: device, connection: connection, limits: pairingLimits, now: now))
        }
        return .opening
    }

    /// What the machine asks to be done off the caller's thread, as it asked it.
    enum Opening {
        case automatic
        case lookUp(invitation: String)
        case invited(Invitation)
    }

    /// A device's attach: an outcome, or a session to open on the catalog queue.
    enum AttachDecision {
        case decided(AttachOutcome)
        case open(Opening)

        var outcome: AttachOutcome {
            guard case .decided(let outcome) = self else { return .opening }
            return outcome
        }
    }

    /// Makes a transition and carries out its actions under the lock, like `decide`; an action that asks
    /// for a session to be opened is returned for the caller to carry out.
    private func decideAttach(_ transition: (inout Machine) -> [Machine.Action]) -> AttachDecision {
        lock.withLock {
            let actions = transition(&machine)
            let outcome = perform(actions)
            for action in actions {
                switch action {
                case .openAutomaticSession: return .open(.automatic)
                case .lookUpInvitation(let code): return .open(.lookUp(invitation: code))
                case .openInvitedSession(let invitation): return .open(.invited(invitation))
                default: continue
                }
            }
            return .decided(outcome ?? Self.noDecision)
        }
    }

    /// On the catalog queue: carries out what the machine asked for.
    private func open(_ opening: Opening, for device: ConnectingDevice, connection: UInt64, limits: PairingLimits,
                      now: Double) -> AttachOutcome {
        switch opening {
        case .automatic:
            return openAutomaticSession(for: device, connection: connection, now: now)
        case .lookUp(let code):
            let invitation: Invitation?
            do {
                invitation = try catalog.invitation(code: code)
            } catch {
                return decide { $0.invitedSessionFailed(for: device, error: "\(error)") } ?? Self.noDecision
            }
            let decision = decideAttach {
                $0.invitationFound(invitation, code: code, for: device, connection: connection, limits: limits, now: now)
            }
            guard case .open(let next) = decision, case .invited = next else { return decision.outcome }
            return open(next, for: device, connection: connection, limits: limits, now: now)
        case .invited(let invitation):
            return openInvitedSession(invitation, for: device, connection: connection, now: now)
        }
    }

    /// On the catalog queue: a new session of the invitation's study, bound to the device.
    private func openInvitedSession(_ invitation: Invitation, for device: ConnectingDevice, connection: UInt64, now: Double) -> AttachOutcome {
        var created: SessionRecord?
        let outcome: AttachOutcome?
        do {
            let assignment = StudyAssignment(study: invitation.study, iteration: invitation.iteration, participant: invitation.participant)
            let context = try catalog.studyContext(of: assignment)
            let record = try catalog.createSession(
                name: "\(invitation.study)-\(invitation.participant)", testUser: invitation.participant,
                notes: "opened by the participant's invitation", sensors: [], boundDevice: device.id, study: assignment, now: now)
            created = record
            let session = try makeSession(record, isAutomatic: false, tasks: context.tasks, invitation: invitation.code)
            // Bound last: a phone whose session could not be made may try again. Not over a change made
            // since the invitation was read (its tester withdrew).
            let acceptance = InvitationLifecycle().accepted(invitation, session: record.id, device: device.id)
            guard try !catalog.apply([acceptance]).isEmpty else { throw RecruitmentError.invitationChanged(invitation.code) }
            session.journal.submit({ try $0.writeStudyContext(context) }, onFailure: logFailure(session))
            outcome = lock.withLock {
                live[record.id] = session
                return perform(machine.invitedSessionOpened(record, invitation: invitation.code, for: device, connection: connection, now: now))
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
        if let existing = lock.withLock({ machine.automaticSessionDue(for: device, connection: connection, now: now).map { perform($0) } }) {
            return existing ?? Self.noDecision
        }
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

package import SessionModel

/// Study invitations (issue 32, docs/SESSION-CORE.md): a recruited tester's phone presents its
/// invitation's code in `<hello>` and records into a session of the invitation's study, iteration
/// and participant, opened for it on first use. The invitation is then bound to that phone: it
/// may reconnect, any other device is refused. Unknown and expired codes count against the
/// address like wrong pairing codes (`PairingGuard`), so that codes cannot be guessed; a right one
/// forgives nothing, since anyone may hold an invitation of their own.
extension SessionLifecycleStateMachine {
    /// A device presents invitation `code`: its open session when it has one, else the catalog is
    /// asked (`.lookUpInvitation`, answered through `invitationFound`).
    mutating func invitation(_ code: String, for device: ConnectingDevice, connection: UInt64, limits: PairingLimits,
                             now: Double) -> [Action] {
        var actions: [Action] = []
        guard admitted(device.address, .invitation, limits: limits, now: now, &actions) else { return actions }
        guard Invitation.isCode(code) else { return unknownInvitation(code, address: device.address, limits: limits, now: now) }
        if let open = openSession(of: code) {
            return join(open, code: code, device: device, connection: connection, now: now)
        }
        return [.lookUpInvitation(code)]
    }

    /// The catalog's answer for the invitation `device` presents (nil: no such code). Opens its
    /// session on first use (`.openInvitedSession`), else attaches or refuses the device.
    package mutating func invitationFound(_ invitation: Invitation?, code: String, for device: ConnectingDevice, connection: UInt64,
                                          limits: PairingLimits, now: Double) -> [Action] {
        // Another connection of the device may have opened it meanwhile.
        if let open = openSession(of: code) {
            return join(open, code: code, device: device, connection: connection, now: now)
        }
        let presentation = invitations.presented(invitation, by: device.id, now: now)
        switch presentation {
        case .unknown(let expiry):
            return unknownInvitation(code, address: device.address, limits: limits, now: now) + (expiry.map { [.storeInvitation($0)] } ?? [])
        case .boundToAnotherDevice:
            return inUse(by: device)
        case .withdrawn, .used, .sessionEnded:
            return [.reject(reason: presentation.refusal ?? "", logged: false)]
        case .openSession(let invitation):
            return [.openInvitedSession(invitation)]
        }
    }

    /// The invitation's session is in the catalog, bound to `device`, which records into it now.
    package mutating func invitedSessionOpened(_ record: SessionRecord, invitation: String, for device: ConnectingDevice,
                                               connection: UInt64, now: Double) -> [Action] {
        open[record.id] = OpenSession(record: record, isAutomatic: false, invitation: invitation)
        return [
            .publish(.started(record)),
            .log(.info, "device \(device.id) joined study \(record.study ?? "?") as participant \(record.participant ?? "?") by invitation: opened session \(record.id) (\(record.name))"),
        ] + recording(record.id, device: device, connection: connection, now: now)
            + [.storeInvitation(invitations.recording(invitation))]
    }

    /// The invited sessions whose device has been away `idleAfter` seconds stop: an unmoderated
    /// session has nobody to stop it, and its tester may have closed the app without a goodbye.
    package func idleInvitedSessions(idleAfter: Double, now: Double) -> [Action] {
        open.values.sorted { $0.record.id < $1.record.id }.flatMap { session -> [Action] in
            guard session.invitation != nil, session.connections.isEmpty, let since = session.idleSince, now - since >= idleAfter else { return [] }
            return [.log(.notice, "session \(session.record.id) (\(session.record.name)): its invited device has been away for \(Self.seconds(now - since)) s: stopped"),
                    .stop(session.record.id, now: now)]
        }
    }

    /// The invitation's session could not be opened (or the invitation not read).
    package func invitedSessionFailed(for device: ConnectingDevice, error: String) -> [Action] {
        [.log(.error, "cannot open the invited session of device \(device.id): \(error)"),
         .reject(reason: "the server cannot open the invitation's session: \(error)", logged: false)]
    }

    /// A code typed or linked into the console's invitation page (`/i/CODE`): nil when it may be looked up,
    /// else how long `address` must wait (the actions count the refusal).
    package mutating func webInvitation(address: String, limits: PairingLimits, now: Double) -> (retryAfter: Double?, actions: [Action]) {
        guard case .refused(let retryAfter, _) = pairingGuard.admit(address: address, now: now, limits: limits) else { return (nil, []) }
        return (retryAfter, [.count(.pairingRefused)])
    }

    /// No invitation has the code a visitor typed: a wrong code, counted and logged as a device's is.
    package mutating func webInvitationWrong(_ code: String, address: String, limits: PairingLimits, now: Double) -> [Action] {
        var actions: [Action] = []
        _ = wrongCode(code, .invitation, address: address, sessions: [], limits: limits, now: now, &actions)
        return actions
    }

    /// The open session invitation `code` opened, if any.
    private func openSession(of code: String) -> OpenSession? {
        open.values.first { $0.invitation.map { constantTimeEqual($0, code) } == true }
    }

    /// The invitation's open session: its own device records into it, another is refused.
    private mutating func join(_ session: OpenSession, code: String, device: ConnectingDevice, connection: UInt64,
                               now: Double) -> [Action] {
        guard session.record.boundDevice == device.id else { return inUse(by: device) }
        return recording(session.record.id, device: device, connection: connection, now: now)
    }

    private func inUse(by device: ConnectingDevice) -> [Action] {
        [.log(.notice, "device \(device.id) presented an invitation bound to another device: refused"),
         .reject(reason: InvitationLifecycle.Presentation.boundToAnotherDevice.refusal ?? "", logged: true)]
    }

    /// No invitation has `code`, or it expired: a wrong code, as a wrong pairing code is.
    private mutating func unknownInvitation(_ code: String, address: String, limits: PairingLimits, now: Double) -> [Action] {
        var actions: [Action] = []
        let failure = wrongCode(code, .invitation, address: address, sessions: [], limits: limits, now: now, &actions)
        actions.append(.reject(reason: "unknown or expired invitation: check the code, or ask the study's organiser for a new one"
                               + Self.waitNotice(failure, address: PairingGuard.key(address)), logged: true))
        return actions
    }
}

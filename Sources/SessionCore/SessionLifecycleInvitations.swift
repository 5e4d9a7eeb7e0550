package import SessionModel
internal import WireProtocol

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
        let address = device.address ?? "unknown"
        var actions: [Action] = []
        guard admitted(address, .invitation, limits: limits, now: now, &actions) else { return actions }
        guard Invitation.isCode(code) else { return unknownInvitation(code, address: address, limits: limits, now: now) }
        if let open = openSession(of: code) {
            return join(open, code: code, device: device, connection: connection, now: now)
        }
        return [.lookUpInvitation(code)]
    }

    /// The catalog's answer for the invitation `device` presents (nil: no such code). Opens its
    /// session on first use (`.openInvitedSession`), else attaches or refuses the device.
    package mutating func invitationFound(_ invitation: Invitation?, code: String, for device: ConnectingDevice, connection: UInt64,
                                          limits: PairingLimits, now: Double) -> [Action] {
        let address = device.address ?? "unknown"
        // Another connection of the device may have opened it meanwhile.
        if let open = openSession(of: code) {
            return join(open, code: code, device: device, connection: connection, now: now)
        }
        guard let invitation, invitation.status != .expired, invitation.status != .invited || invitation.expires > now else {
            var actions = unknownInvitation(code, address: address, limits: limits, now: now)
            if invitation?.status == .invited { actions.append(.updateInvitation(code, .expired)) }
            return actions
        }
        if let bound = invitation.deviceId, bound != device.id { return inUse(code, by: device) }
        switch invitation.status {
        case .withdrawn:
            return [.reject(reason: "this invitation was withdrawn: its tester left the study's pool", logged: false)]
        case .done:
            return [.reject(reason: "this invitation was used: its session has ended; ask the study's organiser for a new one", logged: false)]
        case .invited, .accepted, .recording, .expired:  // (expired ones were refused above)
            guard invitation.sessionId == nil else {
                // Bound to this device, but its session is no longer open (it was stopped or deleted).
                return [.reject(reason: "this invitation's session has ended; ask the study's organiser for a new one", logged: false)]
            }
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
            + [.updateInvitation(invitation, .recording, session: record.id, device: device.id)]
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

    /// The open session invitation `code` opened, if any.
    private func openSession(of code: String) -> OpenSession? {
        open.values.first { $0.invitation.map { constantTimeEqual($0, code) } == true }
    }

    /// The invitation's open session: its own device records into it, another is refused.
    private mutating func join(_ session: OpenSession, code: String, device: ConnectingDevice, connection: UInt64,
                               now: Double) -> [Action] {
        guard session.record.boundDevice == device.id else { return inUse(code, by: device) }
        return recording(session.record.id, device: device, connection: connection, now: now)
    }

    private func inUse(_ code: String, by device: ConnectingDevice) -> [Action] {
        [.log(.notice, "device \(device.id) presented an invitation bound to another device: refused"),
         .reject(reason: "this invitation is in use by another phone", logged: true)]
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

internal import SessionModel

/// A device keeps its session across drops (issue 52, docs/SESSION-CORE.md "Drops"). Mobile browsers and
/// phones changing networks lose sockets all the time: an automatic session whose last connection ends
/// without a goodbye waits `reconnectGrace` seconds for its device (interrupted, with a gap, as any other
/// session whose device is away) and stops only then; the device's reconnect cancels the wait and records
/// into it again. A session stopped for its device's drop leaves a floor: the highest seq it stored of that
/// device, which the device's next session takes for already stored, so that what the device resends after
/// the drop is stored once across its sessions.
extension SessionLifecycleStateMachine {
    /// The reconnect grace of an automatic session whose device just dropped: its timer (a new number, so
    /// that a timer of an earlier drop, firing late, stops nothing).
    mutating func startGrace(_ session: inout OpenSession) -> [Action] {
        graceTimers += 1
        session.graceTimer = graceTimers
        return [.startReconnectGrace(session.record.id, timer: graceTimers, seconds: reconnectGrace)]
    }

    /// The grace's timer `timer` of session `id` fired: the session stops, unless its device came back (or
    /// dropped again, with a timer of its own) or it stopped meanwhile.
    package mutating func reconnectGraceEnded(_ id: Int64, timer: UInt64, now: Double) -> [Action] {
        guard let session = open[id], session.graceTimer == timer, session.connections.isEmpty else { return [] }
        let device = session.record.device ?? "?"
        return [.log(.notice, "session \(id) (\(session.record.name)): device \(device) did not reconnect within "
                     + "\(Self.seconds(reconnectGrace)) s (capture.reconnect_grace): stopped")]
            + stopForDrop(id, device: device, now: now)
    }

    /// An automatic session stops because its device dropped and stayed away: what the device resends later
    /// goes to its next session, which must know what this one stored.
    mutating func stopForDrop(_ id: Int64, device: String, now: Double) -> [Action] {
        resendFloors[device] = id
        return [.rememberResendFloor(id, device: device), .stop(id, now: now)]
    }

    /// The device records into `session` now: a grace it was waiting out ends, and its next session after a
    /// stop for its drop takes the floor (not the session that stopped for it, which may be stopping as the
    /// device returns: it stores each seq once on its own).
    mutating func reconnected(_ session: inout OpenSession, device: String) -> [Action] {
        var actions: [Action] = []
        if session.graceTimer != nil {
            session.graceTimer = nil
            actions.append(.cancelReconnectGrace(session.record.id))
        }
        if let source = resendFloors[device], source != session.record.id {
            resendFloors[device] = nil
            actions.append(.applyResendFloor(session.record.id, device: device))
        }
        return actions
    }

    /// muevald stops: the automatic sessions waiting out a grace stop with it, as they did before there was a
    /// grace (a restart does not carry a grace over: recovery would reopen them as sessions that never stop).
    package func sessionsAwaitingReconnect() -> [Int64] {
        open.values.filter { $0.graceTimer != nil }.map(\.record.id).sorted()
    }

    /// The log's words for a grace just started, after "device D disconnected".
    static func graceNotice(_ grace: [Action]) -> String {
        guard case .startReconnectGrace(_, _, let grace)? = grace.first else { return "" }
        return "; it stops unless the device reconnects within \(seconds(grace)) s (capture.reconnect_grace)"
    }
}

internal import Foundation

/// A device keeps its session across drops (`SessionLifecycleReconnect.swift` decides): the reconnect
/// grace's timers, and the floor a session stopped for its device's drop leaves for the device's next one.
extension SessionRegistry {
    /// `capture.reconnect_grace` after a reload: the next drop waits this long (a grace already running keeps its own).
    public func setReconnectGrace(_ seconds: Double) {
        lock.withLock { machine.reconnectGrace = seconds }
    }

    /// Under `lock`: stops session `id` after `seconds`, unless the timer is cancelled first (its device came
    /// back, or it stopped otherwise); the machine decides again when it fires (`reconnectGraceEnded`).
    func startGraceTimer(_ id: Int64, timer: UInt64, seconds: Double) {
        graceTimers[id]?.cancel()
        graceTimers[id] = Task { [weak self] in
            do {
                try await Task.sleep(for: .seconds(seconds))
            } catch {
                return  // cancelled
            }
            self?.decide { $0.reconnectGraceEnded(id, timer: timer, now: Date().timeIntervalSince1970) }
        }
    }

    /// Under `lock`: before the device's first events in `session` are stored, the session's file learns the
    /// highest seq the device's previous session stored (once that session's stop knows it): what the device
    /// resends of it is acknowledged and counted as a duplicate, not stored again.
    func applyResendFloor(_ floor: ResendFloor, device: String, to session: EvaluationSession) {
        session.journal.submit({ [logger] file in
            guard let seq = floor.wait() else { return }
            file.setResendFloor(seq, of: device)
            logger.info("session \(session.id): what device \(device) resends up to seq \(seq) is in session \(floor.session) already")
        }, onFailure: logFailure(session))
    }

    /// muevald stops: right after the capture server has closed the devices' connections, the automatic
    /// sessions waiting out a grace stop, as they did at a shutdown before there was a grace. A restart
    /// does not carry a grace over (recovery reopens a session left open as an ordinary one, bound to its
    /// device, that no timer stops).
    public func endReconnectGraces(now: Double) async {
        let waiting = lock.withLock { machine.sessionsAwaitingReconnect().compactMap { live[$0] } }
        for session in waiting {
            logger.info("session \(session.id) stops with muevald: its device had dropped (capture.reconnect_grace)")
            do {
                _ = try await stop(session, now: now)
            } catch {
                logger.error("session \(session.id): cannot stop it: \(error)")
            }
        }
    }
}

internal import Foundation
internal import SessionModel

/// Pairing codes: which open session a code names, and what a wrong one costs (`PairingGuard`).
extension SessionLifecycleStateMachine {
    enum Pairing: Equatable {
        case paired(Int64)
        /// The actions say why (`.reject`).
        case refused
        /// No open session has a code: a legacy `token` is then no pairing attempt.
        case noPairingSession
    }

    /// The open session whose pairing code `address` presents, unless that address sent too many
    /// wrong codes. A wrong code is counted, logged (rationed) and may give sessions new codes.
    /// `explicit`: the code came as `pairing`, so no session having a code is a refusal too.
    mutating func pair(_ code: String, address: String, explicit: Bool, limits: PairingLimits, now: Double,
                       _ actions: inout [Action]) -> Pairing {
        let key = PairingGuard.key(address)
        let candidates = open.values.filter { $0.record.pairingCode != nil }.map(\.record).sorted { $0.id < $1.id }
        guard !candidates.isEmpty else {
            guard explicit else { return .noPairingSession }
            actions += [.count(.authenticationFailure),
                        .reject(reason: "no open session has a pairing code: start one with `muevalctl start --pairing-code`", logged: false)]
            return .refused
        }
        guard admitted(address, .pairingCode, limits: limits, now: now, &actions) else { return .refused }
        if let session = candidates.first(where: { $0.pairingCode.map { constantTimeEqual($0, code) } == true }) {
            pairingGuard.succeeded(address: address, kind: .pairingCode)
            return .paired(session.id)
        }
        let failure = wrongCode(code, .pairingCode, address: address, sessions: candidates.map(\.id), limits: limits, now: now, &actions)
        let rotated = rotateCodes(of: failure.rotate, limits: limits, &actions)
        if !rotated.isEmpty { actions.append(.publish(.pairingCodesChanged(rotated))) }
        actions.append(.reject(reason: "wrong pairing code: ask the developer for the session's code (`muevalctl status`)"
                               + Self.waitNotice(failure, address: key), logged: true))
        return .refused
    }

    /// Whether `address` may have its code compared now; when not, the actions refuse it.
    mutating func admitted(_ address: String, _ kind: PairingGuard.Kind, limits: PairingLimits, now: Double, _ actions: inout [Action]) -> Bool {
        guard case .refused(let retryAfter, _) = pairingGuard.admit(address: address, now: now, limits: limits) else { return true }
        actions += [.count(.pairingRefused),
                    .reject(reason: "too many wrong \(kind.rawValue)s from \(PairingGuard.key(address)): try again in \(Self.seconds(retryAfter)) s",
                            logged: true)]
        return false
    }

    /// `address` presented a wrong code: counted, and logged as `PairingGuard` rations it.
    mutating func wrongCode(_ code: String, _ kind: PairingGuard.Kind, address: String, sessions: [Int64], limits: PairingLimits, now: Double,
                            _ actions: inout [Action]) -> PairingGuard.Failure {
        actions.append(.count(.authenticationFailure))
        let failure = pairingGuard.failed(address: address, code: code, kind: kind, sessions: sessions, now: now, limits: limits)
        if let line = Self.logLine(failure, kind, address: PairingGuard.key(address)) { actions.append(.log(.warning, line)) }
        return failure
    }

    /// What a refused device is told about its next attempt; empty when it need not wait.
    static func waitNotice(_ failure: PairingGuard.Failure, address: String) -> String {
        failure.wait.map { "; \(failure.failures) wrong codes from \(address): the next attempt in \(seconds($0)) s" } ?? ""
    }

    /// New codes for the sessions that took `rotateAfter` wrong ones; the catalog has them, the
    /// file gets them with its next metadata.
    private mutating func rotateCodes(of ids: [Int64], limits: PairingLimits, _ actions: inout [Action]) -> [SessionRecord] {
        ids.compactMap { id -> SessionRecord? in
            guard open[id] != nil else { return nil }
            open[id]?.record.pairingCode = makePairingCode()
            guard let record = open[id]?.record else { return nil }
            actions += [
                .update(record, write: Write(file: false)),
                .log(.notice, "session \(id) (\(record.name)): \(limits.rotateAfter) wrong pairing codes while it was open: it has a new code (`muevalctl status`), which its device needs to connect again"),
            ]
            return record
        }
    }

    /// One line per counted wrong code, as `PairingGuard` rations them; nil: not logged.
    private static func logLine(_ failure: PairingGuard.Failure, _ kind: PairingGuard.Kind, address: String) -> String? {
        guard failure.counted, case .log(let unlogged) = failure.log else { return nil }
        var line = "wrong \(kind.rawValue) from \(address) (\(failure.failures) from this address)"
        if let wait = failure.wait { line += failure.lockedOut ? ": refused for \(seconds(wait)) s" : ": next attempt in \(seconds(wait)) s" }
        if unlogged > 0 { line += "; \(unlogged) wrong codes before it were not logged (too many a minute)" }
        return line
    }

    /// Whole seconds, rounded up, for a person to read.
    static func seconds(_ value: Double) -> String {
        String(format: "%.0f", value.rounded(.up))
    }

    /// Six random digits: short enough to type on a phone, for a session that lasts an hour.
    static func randomPairingCode() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(format: "%06d", Int.random(in: 0..<1_000_000, using: &generator))
    }
}

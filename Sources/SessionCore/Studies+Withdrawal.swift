public import SessionModel
internal import TesterPool

/// A tester's withdrawal from the pool (issue 32, made to finish in issue 38; docs/STUDIES.md
/// "Withdrawal"): recorded in testers.sqlite first, then carried out step by step, each step safe to
/// repeat, the profile deleted last. A step that fails leaves the withdrawal pending, with the tester's
/// secret still valid: their retry, the lab's, or muevald's next start carries out what is left.
extension Studies {
    /// A tester leaves the pool: their invitations become `withdrawn`, their sessions still open in those
    /// studies are stopped (nothing more is recorded), with `deleteRecordings` their sessions in those
    /// studies are deleted with their files and the profile answers their participant entries carried are
    /// emptied, and last their profile is deleted. With `secret`, the tester's own request (the withdrawal
    /// page): it must match the one shown at enrolment. Throws only when the request cannot be recorded
    /// (a wrong secret, an unknown tester, testers.sqlite failing); a step that fails is in `pending`.
    public func withdraw(tester code: String, secret: String? = nil, deleteRecordings: Bool, now: Double) async throws -> Withdrawal {
        let request = try pool.requestWithdrawal(code, secret: secret, deleteRecordings: deleteRecordings, now: now)
        return await carryOut(request, now: now)
    }

    /// Carries out every withdrawal recorded and not finished (muevald's start), oldest first.
    public func resumeWithdrawals(now: Double) async throws -> [Withdrawal] {
        var withdrawals: [Withdrawal] = []
        for request in try pool.pendingWithdrawals() { withdrawals.append(await carryOut(request, now: now)) }
        return withdrawals
    }

    /// Carries out what `InvitationLifecycle.withdrawal` decides, step by step; a step already done is a no-op.
    private func carryOut(_ request: WithdrawalRecord, now: Double) async -> Withdrawal {
        let code = request.code
        var withdrawal = Withdrawal(tester: request.tester ?? Tester(code: code, profile: [:], consentVersion: 0, enrolled: request.requested),
                                    invitations: [], deletedSessions: [], withdrawn: request.finished != nil)
        let plan: InvitationLifecycle.Withdrawal
        do {
            let invitations = try catalog.invitations(participant: code)
            plan = lifecycle.withdrawal(of: code, invitations: invitations, sessions: try catalog.sessions(),
                                        open: Set(registry.openSessions().map(\.id)), deleteRecordings: request.deleteRecordings)
            // Which sessions are the tester's follows from the invitations: nothing more is done before they are withdrawn.
            try catalog.apply(plan.invitations)
            withdrawal.invitations = try catalog.invitations(participant: code)
        } catch {
            withdrawal.pending.append(.init(step: "withdraw the invitations", error: "\(error)"))
            return withdrawal
        }
        guard request.finished == nil else { return withdrawal }

        for session in plan.sessions {
            if plan.stop.contains(session.id) {
                do {
                    withdrawal.stoppedSessions.append(try await registry.stop(String(session.id), now: now).name)
                } catch SessionError.alreadyStopped {
                    // Stopped meanwhile: done.
                } catch {
                    withdrawal.pending.append(.init(step: "stop session \(session.name)", error: "\(error)"))
                    continue
                }
            }
            guard plan.delete.contains(session.id) else { continue }
            do {
                withdrawal.deletedSessions.append(try registry.delete(String(session.id)).name)
            } catch {
                withdrawal.pending.append(.init(step: "delete session \(session.name)", error: "\(error)"))
            }
        }
        guard withdrawal.pending.isEmpty else { return withdrawal }
        do {
            if plan.forgetAttributes { try catalog.forgetParticipantAttributes(code: code) }
            // Last: until here the tester's secret finds this withdrawal again.
            try pool.finishWithdrawal(code, now: now)
            withdrawal.withdrawn = true
        } catch {
            withdrawal.pending.append(.init(step: "delete the profile", error: "\(error)"))
        }
        return withdrawal
    }
}

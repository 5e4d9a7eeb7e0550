public import SessionModel
internal import TesterPool

/// Recruiting a study's participants from the tester pool and their invitations (issue 32, docs/STUDIES.md
/// "Recruiting and remote studies"); a tester's withdrawal is in Studies+Withdrawal.swift.
extension Studies {
    /// Chooses `count` testers by quota sampling and makes each a participant of `study` with an invitation.
    ///
    /// A participant's attributes are only the profile fields the quotas and requirements name: the rest
    /// of the profile stays in the pool. The recruitment (one per study) takes the iteration (the study's
    /// last, or a new first one), the target (by default every invitation that can still be done, so that
    /// recruiting again raises it and replaces withdrawn or expired testers), the deadline and the seed.
    /// Testers already in the study are never chosen again.
    public func recruit(study name: String, count: Int, quotas: [Quota], requirements: [Requirement], iteration: Int?,
                        target: Int?, deadline: Double?, seed: UInt64?, now: Double) throws -> RecruitmentResult {
        guard count >= 1 else { throw RecruitmentError.badCount(count) }
        if let target, target < 1 { throw RecruitmentError.badTarget(target) }
        if let deadline, !(deadline > now) { throw RecruitmentError.deadlinePassed }
        var study = try catalog.study(name)
        let settings = try pool.settings()
        try check(quotas: quotas, requirements: requirements, against: settings)
        let seed = seed ?? UInt64.random(in: .min ... .max)
        let sampler = try QuotaSampler(count: count, quotas: quotas, requirements: requirements,
                                       excluded: Set(study.participants.map(\.code)), seed: seed)
        let selection = sampler.select(from: try pool.testers())
        guard !selection.selected.isEmpty else { throw RecruitmentError.nobodySelected(selection.shortfalls) }

        let earlier = try catalog.recruitment(study: name)
        let iteration = try iteration ?? earlier?.iteration ?? study.iterations.last?.number
            ?? catalog.addIteration(to: name, number: nil, label: nil, now: now).number
        study = try catalog.study(name)
        guard study.iteration(iteration) != nil else { throw StudyError.noIteration(study: name, iteration: iteration) }

        let named = Set(quotas.map(\.field) + requirements.map(\.field))
        let participants = selection.selected.map {
            Participant(code: $0.code, attributes: $0.profile.filter { named.contains($0.key) }, created: now)
        }
        var generator = SystemRandomNumberGenerator()
        var codes: [String] = []
        for _ in participants {
            var code = Invitation.newCode(using: &generator)
            while try codes.contains(code) || catalog.invitation(code: code) != nil { code = Invitation.newCode(using: &generator) }
            codes.append(code)
        }
        let invitations = lifecycle.invite(participants, codes: codes, study: name, iteration: iteration, lifetime: invitationLifetime, now: now)
        let transition = try lifecycle.recruit(name, earlier: earlier, invitations: try catalog.invitations(study: name),
                                                     recruited: invitations.count, iteration: iteration, target: target,
                                                     deadline: deadline, seed: seed, now: now)
        let recruitment = transition.recruitment
        try catalog.createInvitations(invitations, participants: participants, recruitment: recruitment)
        registry.logger.info("study \(name): \(invitations.count) testers recruited, target \(recruitment.target) done\(transition.change == .reopened ? "; it completed before and runs again" : "")")
        // The completion service arms the deadline and counts the target from now on (a reopened study's too).
        registry.events.publish([transition.event])
        return RecruitmentResult(recruitment: recruitment, invitations: invitations, shortfalls: selection.shortfalls)
    }

    /// The study's invitations, those past their expiry marked `expired` first.
    public func invitations(study: String, now: Double) throws -> [Invitation] {
        try catalog.apply(lifecycle.expiries(of: try catalog.invitations(study: study), now: now))
        return try catalog.invitations(study: study)
    }

    /// The recruitment, its invitations per status, and each invitation of the study.
    public func status(study: String, now: Double) throws -> RecruitmentStatus {
        let invitations = try invitations(study: study, now: now)
        return lifecycle.status(of: study, recruitment: try catalog.recruitment(study: study), invitations: invitations)
    }

    /// Whether `recruitment` completes at `now` (the study completion service asks).
    package func verdict(_ recruitment: Recruitment, now: Double) throws -> InvitationLifecycle.Verdict {
        lifecycle.verdict(recruitment, invitations: try catalog.invitations(study: recruitment.study), now: now)
    }

    /// Records that `recruitment`'s study completed for `reason` with its report at `report` (empty: none was
    /// written) and says so on the lifecycle stream; returns the recruitment as stored.
    @discardableResult
    package func complete(_ recruitment: Recruitment, reason: Recruitment.CompletionReason, report: String, now: Double) throws -> Recruitment {
        var transition: InvitationLifecycle.RecruitmentTransition?
        let completed = try catalog.updateRecruitment(study: recruitment.study) {
            let completion = lifecycle.completed($0, reason: reason, report: report.isEmpty ? nil : report, now: now)
            transition = completion
            return completion.recruitment
        }
        registry.events.publish(transition.map { [$0.event] } ?? [])
        return completed
    }

    /// Quotas and requirements name the pool's fields, and choices among a field's.
    private func check(quotas: [Quota], requirements: [Requirement], against settings: PoolSettings) throws {
        let known = settings.fields.map(\.name)
        for (field, values) in quotas.map({ ($0.field, [$0.value]) }) + requirements.map({ ($0.field, $0.values) }) {
            guard let definition = settings.field(field) else { throw PoolError.unknownField(field, known: known) }
            for value in values where !definition.isFreeText && !definition.choices.contains(value) {
                throw PoolError.notAChoice(field: field, value: value, choices: definition.choices)
            }
        }
    }
}

public import SessionModel

/// Studies' recruitment from the tester pool and their invitations, in the catalog (issue 32,
/// docs/STUDIES.md "Recruiting and remote studies"). The pool itself (profiles) lives elsewhere
/// (`TesterPool`, DATA/testers.sqlite): the catalog knows recruited testers only by their codes.
extension Catalog {
    /// Adds the recruited participants, their invitations and the study's recruitment (replacing an
    /// earlier one), all or none. Throws when the study or iteration is unknown or a participant exists.
    public func createInvitations(_ invitations: [Invitation], participants: [Participant], recruitment: Recruitment) throws {
        for participant in participants { try StudyError.checkName(participant.code, as: "participant code") }
        try lock.withLock {
            let id = try existingStudy(recruitment.study)
            let study = try loadStudy(recruitment.study)
            guard study.iteration(recruitment.iteration) != nil else {
                throw StudyError.noIteration(study: study.name, iteration: recruitment.iteration)
            }
            try database.transaction {
                for participant in participants {
                    guard study.participant(participant.code) == nil else {
                        throw StudyError.participantExists(study: study.name, participant: participant.code)
                    }
                    let statement = try database.prepare("INSERT INTO study_participants (study, code, attributes, created) VALUES (?, ?, ?, ?)")
                    statement.bind([.integer(id), .text(participant.code), .text(try JSONColumn.text(participant.attributes)), .real(participant.created)])
                    try statement.run()
                }
                for invitation in invitations {
                    let statement = try database.prepare("""
                        INSERT INTO invitations (code, study, iteration, participant, status, created, expires, session, device)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """)
                    statement.bind([.text(invitation.code), .integer(id), .integer(Int64(invitation.iteration)), .text(invitation.participant),
                                    .text(invitation.status.rawValue), .real(invitation.created), .real(invitation.expires),
                                    invitation.sessionId.map { .integer($0) } ?? .null, text(invitation.deviceId)])
                    try statement.run()
                }
                try upsert(recruitment, id: id)
            }
        }
    }

    public func invitation(code: String) throws -> Invitation? {
        try lock.withLock { try invitations(where: "i.code = ?", [.text(code)]).first }
    }

    /// The invitation that opened session `sessionId`, if one did.
    public func invitation(sessionId: Int64) throws -> Invitation? {
        try lock.withLock { try invitations(where: "i.session = ?", [.integer(sessionId)]).first }
    }

    /// A study's invitations by participant; throws when there is no such study.
    public func invitations(study: String) throws -> [Invitation] {
        try lock.withLock {
            let id = try existingStudy(study)
            return try invitations(where: "i.study = ?", [.integer(id)])
        }
    }

    /// A tester's invitations in every study.
    public func invitations(participant: String) throws -> [Invitation] {
        try lock.withLock { try invitations(where: "i.participant = ?", [.text(participant)]) }
    }

    /// Stores the transitions `InvitationLifecycle` decided, all or none, each only while its invitation still
    /// has a status it starts from; returns the invitations changed, as they are now. Throws when an
    /// invitation does not exist.
    @discardableResult
    public func apply(_ transitions: [InvitationTransition]) throws -> [Invitation] {
        guard !transitions.isEmpty else { return [] }
        return try lock.withLock {
            var changed: [String] = []
            try database.transaction {
                for transition in transitions {
                    let from = transition.from.map(\.rawValue).sorted()
                    let statement = try database.prepare("""
                        UPDATE invitations SET status = ?, session = COALESCE(?, session), device = COALESCE(?, device)
                        WHERE code = ? AND status IN (\(Array(repeating: "?", count: from.count).joined(separator: ", ")))
                        """)
                    statement.bind([.text(transition.to.rawValue), transition.session.map { .integer($0) } ?? .null, text(transition.device),
                                    .text(transition.code)] + from.map { .text($0) })
                    try statement.run()
                    if database.changes > 0 {
                        changed.append(transition.code)
                    } else if try invitations(where: "i.code = ?", [.text(transition.code)]).isEmpty {
                        throw RecruitmentError.noInvitation(transition.code)
                    }
                }
            }
            return try changed.compactMap { try invitations(where: "i.code = ?", [.text($0)]).first }
        }
    }

    /// The study's recruitment; nil when it recruited nobody. Throws when there is no such study.
    public func recruitment(study: String) throws -> Recruitment? {
        try lock.withLock {
            let id = try existingStudy(study)
            return try recruitments(where: "r.study = ?", [.integer(id)]).first
        }
    }

    /// Every study's recruitment, by study name.
    public func recruitments() throws -> [Recruitment] {
        try lock.withLock { try recruitments(where: "1", []) }
    }


    /// Changes the study's recruitment as `change` says, read and written under the catalog's lock (a
    /// recruitment made again meanwhile is the one changed); returns it as stored.
    @discardableResult
    public func updateRecruitment(study: String, _ change: (Recruitment) -> Recruitment) throws -> Recruitment {
        try lock.withLock {
            let id = try existingStudy(study)
            guard let recruitment = try recruitments(where: "r.study = ?", [.integer(id)]).first else {
                throw RecruitmentError.noRecruitment(study: study)
            }
            let changed = change(recruitment)
            try upsert(changed, id: id)
            return changed
        }
    }

    /// Whether `code` was ever a participant's in the catalog: of a study, a session or an invitation
    /// (a study's participant or session deleted since still counts while any of the others names it).
    /// The tester pool draws no such code for a new tester: a later withdrawal with deletion, which finds
    /// sessions by participant code, would delete someone else's.
    public func isParticipantCode(_ code: String) throws -> Bool {
        try lock.withLock {
            let statement = try database.prepare("""
                SELECT EXISTS (SELECT 1 FROM study_participants WHERE code = ?1)
                    OR EXISTS (SELECT 1 FROM sessions WHERE participant = ?1)
                    OR EXISTS (SELECT 1 FROM invitations WHERE participant = ?1)
                """)
            defer { statement.reset() }
            statement.bind(1, code)
            _ = try statement.step()
            return statement.int64(0) != 0
        }
    }

    /// Empties a withdrawn tester's participant attributes (the profile answers recruiting copied) in every study.
    public func forgetParticipantAttributes(code: String) throws {
        try lock.withLock {
            let statement = try database.prepare("UPDATE study_participants SET attributes = '{}' WHERE code = ?")
            statement.bind(1, code)
            try statement.run()
        }
    }

    // MARK: Rows, under the lock

    private func upsert(_ recruitment: Recruitment, id: Int64) throws {
        let statement = try database.prepare("""
            INSERT OR REPLACE INTO recruitment (study, iteration, target, deadline, created, seed, completed, completion_reason, report)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        statement.bind([.integer(id), .integer(Int64(recruitment.iteration)), .integer(Int64(recruitment.target)),
                        recruitment.deadline.map { .real($0) } ?? .null, .real(recruitment.created),
                        .integer(Int64(bitPattern: recruitment.seed)), recruitment.completed.map { .real($0) } ?? .null,
                        text(recruitment.completionReason?.rawValue), text(recruitment.report)])
        try statement.run()
    }

    private func invitations(where condition: String, _ values: [SQLiteValue]) throws -> [Invitation] {
        let statement = try database.prepare("""
            SELECT i.code, s.name, i.iteration, i.participant, i.status, i.created, i.expires, i.session, i.device
            FROM invitations i JOIN studies s ON s.id = i.study WHERE \(condition) ORDER BY s.name, i.participant, i.created
            """)
        statement.bind(values)
        var result: [Invitation] = []
        try statement.forEachRow { row in
            let code = row.string(0) ?? ""
            let stored = row.string(4) ?? ""
            guard let status = InvitationStatus(rawValue: stored) else {
                throw CatalogError.unknownInvitationStatus(path: database.path, code: code, status: stored)
            }
            result.append(Invitation(code: code, study: row.string(1) ?? "", iteration: Int(row.int64(2)),
                                     participant: row.string(3) ?? "", status: status, created: row.double(5), expires: row.double(6),
                                     sessionId: row.isNull(7) ? nil : row.int64(7), deviceId: row.string(8)))
        }
        return result
    }

    private func recruitments(where condition: String, _ values: [SQLiteValue]) throws -> [Recruitment] {
        let statement = try database.prepare("""
            SELECT s.name, r.iteration, r.target, r.deadline, r.created, r.seed, r.completed, r.completion_reason, r.report
            FROM recruitment r JOIN studies s ON s.id = r.study WHERE \(condition) ORDER BY s.name
            """)
        statement.bind(values)
        var result: [Recruitment] = []
        try statement.forEachRow { row in
            result.append(Recruitment(study: row.string(0) ?? "", iteration: Int(row.int64(1)), target: Int(row.int64(2)),
                                      deadline: row.isNull(3) ? nil : row.double(3), created: row.double(4),
                                      seed: UInt64(bitPattern: row.int64(5)), completed: row.isNull(6) ? nil : row.double(6),
                                      completionReason: row.string(7).flatMap(Recruitment.CompletionReason.init(rawValue:)), report: row.string(8)))
        }
        return result
    }
}

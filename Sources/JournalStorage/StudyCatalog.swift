internal import Foundation
public import SessionModel

/// Studies in the catalog (docs/STUDIES.md): their iterations, tasks, participants and questions, and
/// the questionnaire answers. Every change checks names and references and says what is wrong.
extension Catalog {
    public func createStudy(name: String, appId: String?, description: String?, webApp: String? = nil, now: Double) throws -> Study {
        try StudyError.checkName(name, as: "study name")
        try Self.checkWebApp(webApp)
        return try lock.withLock {
            guard try studyID(name) == nil else { throw StudyError.studyExists(name) }
            let statement = try database.prepare("INSERT INTO studies (name, app_id, description, web_app, created) VALUES (?, ?, ?, ?, ?)")
            statement.bind([.text(name), text(appId), text(description), text(webApp), .real(now)])
            try statement.run()
            return Study(name: name, appId: appId, description: description, webApp: webApp, created: now)
        }
    }

    /// Names the study's web app, or (nil) removes it; returns the study as it now is.
    public func setWebApp(_ webApp: String?, of study: String) throws -> Study {
        try Self.checkWebApp(webApp)
        return try lock.withLock {
            let id = try existingStudy(study)
            let statement = try database.prepare("UPDATE studies SET web_app = ? WHERE id = ?")
            statement.bind([text(webApp), .integer(id)])
            try statement.run()
            return try loadStudy(study)
        }
    }

    /// The longest web app URL a study takes: room for any real app's address, and a bound on what the invitation page carries.
    static let maxWebAppBytes = 2048

    /// A web app is an absolute http or https URL with a host, without credentials (the invitation page shows it to
    /// every tester), of at most `maxWebAppBytes`.
    static func checkWebApp(_ url: String?) throws(StudyError) {
        guard let url else { return }
        guard url.utf8.count <= maxWebAppBytes else { throw .tooLong(what: "a study's web app URL", limit: maxWebAppBytes) }
        // Not encoded here: a space, a line break or a character outside URLs' is the lab's mistake to see.
        guard let components = URLComponents(string: url, encodingInvalidCharacters: false), components.scheme.map({ ["http", "https"].contains($0.lowercased()) }) == true,
              components.host?.isEmpty == false, components.user == nil, components.password == nil
        else { throw .badWebApp(url) }
    }

    public func studies() throws -> [Study] {
        try lock.withLock {
            let statement = try database.prepare("SELECT name FROM studies ORDER BY name")
            var names: [String] = []
            try statement.forEachRow { names.append($0.string(0) ?? "") }
            return try names.map { try loadStudy($0) }
        }
    }

    public func study(_ name: String) throws -> Study {
        try lock.withLock { try loadStudy(name) }
    }

    /// The study with its sessions and every questionnaire answer: what its report is made from.
    public func studyData(_ name: String) throws -> StudyData {
        try lock.withLock {
            let study = try loadStudy(name)
            let id = try studyID(name)!
            return StudyData(study: study, sessions: try sessions(where: "WHERE study = ?", [.text(name)]),
                             responses: try responses(of: id))
        }
    }

    /// Adds iteration `number` (the next one when nil).
    public func addIteration(to study: String, number: Int?, label: String?, now: Double) throws -> StudyIteration {
        try lock.withLock {
            let id = try existingStudy(study)
            let next = try integer("SELECT COALESCE(MAX(number), 0) + 1 FROM study_iterations WHERE study = ?", id)
            let number = number ?? Int(next)
            guard number >= 1 else { throw StudyError.badIteration(number) }
            guard try integer("SELECT COUNT(*) FROM study_iterations WHERE study = ? AND number = \(number)", id) == 0 else {
                throw StudyError.iterationExists(study: study, iteration: number)
            }
            let statement = try database.prepare("INSERT INTO study_iterations (study, number, label, created) VALUES (?, ?, ?, ?)")
            statement.bind([.integer(id), .integer(Int64(number)), text(label), .real(now)])
            try statement.run()
            return StudyIteration(number: number, label: label, created: now)
        }
    }

    public func addTask(to study: String, _ task: StudyTask) throws {
        try StudyError.checkTaskName(task.name)
        if let limit = task.timeLimit, !(limit > 0 && limit.isFinite) { throw StudyError.badTimeLimit(limit) }
        try lock.withLock {
            let id = try existingStudy(study)
            guard try integer("SELECT COUNT(*) FROM study_tasks WHERE study = ? AND name = ?", id, task.name) == 0 else {
                throw StudyError.taskExists(study: study, task: task.name)
            }
            let position = try integer("SELECT COALESCE(MAX(position), 0) + 1 FROM study_tasks WHERE study = ?", id)
            let statement = try database.prepare("""
                INSERT INTO study_tasks (study, position, name, instructions, time_limit, success, expected_path)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """)
            statement.bind([.integer(id), .integer(position), .text(task.name), text(task.instructions),
                            task.timeLimit.map { .real($0) } ?? .null, .text(task.success.description), .text(try JSONColumn.text(task.expectedPath))])
            try statement.run()
        }
    }

    public func addParticipant(to study: String, _ participant: Participant) throws {
        try StudyError.checkName(participant.code, as: "participant code")
        try lock.withLock {
            let id = try existingStudy(study)
            guard try integer("SELECT COUNT(*) FROM study_participants WHERE study = ? AND code = ?", id, participant.code) == 0 else {
                throw StudyError.participantExists(study: study, participant: participant.code)
            }
            let statement = try database.prepare("INSERT INTO study_participants (study, code, attributes, created) VALUES (?, ?, ?, ?)")
            statement.bind([.integer(id), .text(participant.code), .text(try JSONColumn.text(participant.attributes)), .real(participant.created)])
            try statement.run()
        }
    }

    public func addQuestion(to study: String, _ question: StudyQuestion) throws {
        try StudyError.checkName(question.id, as: "question id")
        guard question.text.contains(where: { !$0.isWhitespace }) else { throw StudyError.incompleteAnswer(questionnaire: "question", item: "its text") }
        try lock.withLock {
            let id = try existingStudy(study)
            guard try integer("SELECT COUNT(*) FROM study_questions WHERE study = ? AND id = ?", id, question.id) == 0 else {
                throw StudyError.questionExists(study: study, question: question.id)
            }
            let position = try integer("SELECT COALESCE(MAX(position), 0) + 1 FROM study_questions WHERE study = ?", id)
            let statement = try database.prepare("INSERT INTO study_questions (study, position, id, text) VALUES (?, ?, ?, ?)")
            statement.bind([.integer(id), .integer(position), .text(question.id), .text(question.text)])
            try statement.run()
        }
    }

    /// Records (or corrects) questionnaire answers of one participant in one iteration, all or none.
    public func record(_ responses: StudyResponses, in study: String) throws {
        try lock.withLock {
            let id = try existingStudy(study)
            let known = try loadStudy(study)
            try database.transaction {
                for response in responses.sus {
                    try checkTaker(known, iteration: response.iteration, participant: response.participant)
                    let statement = try database.prepare("""
                        INSERT OR REPLACE INTO sus_responses (study, iteration, participant, items, recorded) VALUES (?, ?, ?, ?, ?)
                        """)
                    statement.bind([.integer(id), .integer(Int64(response.iteration)), .text(response.participant),
                                    .text(try JSONColumn.text(response.items)), .real(response.recorded)])
                    try statement.run()
                }
                for response in responses.seq {
                    try checkTaker(known, iteration: response.iteration, participant: response.participant)
                    guard known.task(named: response.task) != nil else { throw StudyError.noTask(study: study, task: response.task) }
                    let statement = try database.prepare("""
                        INSERT OR REPLACE INTO seq_responses (study, iteration, participant, task, rating, recorded) VALUES (?, ?, ?, ?, ?, ?)
                        """)
                    statement.bind([.integer(id), .integer(Int64(response.iteration)), .text(response.participant),
                                    .text(response.task), .integer(Int64(response.rating)), .real(response.recorded)])
                    try statement.run()
                }
                for answer in responses.answers {
                    try checkTaker(known, iteration: answer.iteration, participant: answer.participant)
                    guard known.questions.contains(where: { $0.id == answer.question }) else {
                        throw StudyError.noQuestion(study: study, question: answer.question)
                    }
                    let statement = try database.prepare("""
                        INSERT OR REPLACE INTO question_answers (study, iteration, participant, question, answer, recorded) VALUES (?, ?, ?, ?, ?, ?)
                        """)
                    statement.bind([.integer(id), .integer(Int64(answer.iteration)), .text(answer.participant),
                                    .text(answer.question), .text(answer.text), .real(answer.recorded)])
                    try statement.run()
                }
            }
        }
    }

    /// What a session of `assignment` writes into its file; throws when the study, iteration or participant is unknown.
    /// Called under the lock.
    func context(of assignment: StudyAssignment) throws -> StudyContext {
        let study = try loadStudy(assignment.study)
        try checkTaker(study, iteration: assignment.iteration, participant: assignment.participant)
        return StudyContext(study: study, iteration: study.iteration(assignment.iteration)!,
                            participant: study.participant(assignment.participant)!)
    }

    /// The study context of a session about to start.
    public func studyContext(of assignment: StudyAssignment) throws -> StudyContext {
        try lock.withLock { try context(of: assignment) }
    }

    // MARK: Reading

    private func checkTaker(_ study: Study, iteration: Int, participant: String) throws {
        guard study.iteration(iteration) != nil else { throw StudyError.noIteration(study: study.name, iteration: iteration) }
        guard study.participant(participant) != nil else { throw StudyError.noParticipant(study: study.name, participant: participant) }
    }

    func loadStudy(_ name: String) throws -> Study {
        let row = try database.prepare("SELECT id, app_id, description, web_app, created FROM studies WHERE name = ?")
        defer { row.reset() }
        row.bind(1, name)
        guard try row.step() else { throw StudyError.noStudy(name) }
        let id = row.int64(0)
        var study = Study(name: name, appId: row.string(1), description: row.string(2), webApp: row.string(3), created: row.double(4))
        try rows("SELECT number, label, created FROM study_iterations WHERE study = ? ORDER BY number", id) {
            study.iterations.append(StudyIteration(number: Int($0.int64(0)), label: $0.string(1), created: $0.double(2)))
        }
        try rows("SELECT name, instructions, time_limit, success, expected_path FROM study_tasks WHERE study = ? ORDER BY position", id) {
            study.tasks.append(StudyTask(name: $0.string(0) ?? "", instructions: $0.string(1), timeLimit: $0.isNull(2) ? nil : $0.double(2),
                                         success: (try? TaskSuccess($0.string(3) ?? "")) ?? .observer,
                                         expectedPath: JSONColumn.value([String].self, $0.string(4)) ?? []))
        }
        try rows("SELECT code, attributes, created FROM study_participants WHERE study = ? ORDER BY code", id) {
            study.participants.append(Participant(code: $0.string(0) ?? "", attributes: JSONColumn.value([String: String].self, $0.string(1)) ?? [:],
                                                  created: $0.double(2)))
        }
        try rows("SELECT id, text FROM study_questions WHERE study = ? ORDER BY position", id) {
            study.questions.append(StudyQuestion(id: $0.string(0) ?? "", text: $0.string(1) ?? ""))
        }
        return study
    }

    /// Answers as stored; they were checked when recorded, so they are read back without checks.
    private func responses(of id: Int64) throws -> StudyResponses {
        var responses = StudyResponses()
        try rows("SELECT iteration, participant, items, recorded FROM sus_responses WHERE study = ? ORDER BY iteration, participant", id) {
            if let response = try? SUSResponse(iteration: Int($0.int64(0)), participant: $0.string(1) ?? "",
                                               items: JSONColumn.value([Int].self, $0.string(2)) ?? [], recorded: $0.double(3)) {
                responses.sus.append(response)
            }
        }
        try rows("SELECT iteration, participant, task, rating, recorded FROM seq_responses WHERE study = ? ORDER BY iteration, participant, task", id) {
            if let response = try? SEQResponse(iteration: Int($0.int64(0)), participant: $0.string(1) ?? "", task: $0.string(2) ?? "",
                                               rating: Int($0.int64(3)), recorded: $0.double(4)) {
                responses.seq.append(response)
            }
        }
        try rows("SELECT iteration, participant, question, answer, recorded FROM question_answers WHERE study = ? ORDER BY iteration, participant, question", id) {
            if let answer = try? QuestionAnswer(iteration: Int($0.int64(0)), participant: $0.string(1) ?? "", question: $0.string(2) ?? "",
                                                text: $0.string(3) ?? "", recorded: $0.double(4)) {
                responses.answers.append(answer)
            }
        }
        return responses
    }

    func studyID(_ name: String) throws -> Int64? {
        let statement = try database.prepare("SELECT id FROM studies WHERE name = ?")
        defer { statement.reset() }
        statement.bind(1, name)
        return try statement.step() ? statement.int64(0) : nil
    }

    func existingStudy(_ name: String) throws -> Int64 {
        guard let id = try studyID(name) else { throw StudyError.noStudy(name) }
        return id
    }

    private func integer(_ sql: String, _ id: Int64, _ text: String? = nil) throws -> Int64 {
        let statement = try database.prepare(sql)
        defer { statement.reset() }
        statement.bind([.integer(id)] + (text.map { [.text($0)] } ?? []))
        _ = try statement.step()
        return statement.int64(0)
    }

    private func rows(_ sql: String, _ id: Int64, _ body: (SQLiteStatement) throws -> Void) throws {
        let statement = try database.prepare(sql)
        statement.bind(1, id)
        try statement.forEachRow(body)
    }
}

import Foundation
import JournalStorage
import SessionModel
import Testing

/// The catalog's studies without the daemon: what a fresh catalog holds, what each change checks,
/// and questionnaire answers stored all or none.
@Suite struct StudyCatalogTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("study-catalog-\(UUID().uuidString)").path

    private func catalog() throws -> Catalog {
        let catalog = try Catalog(directory: directory)
        _ = try catalog.createStudy(name: "momentree", appId: "uk.ac.momentree", description: nil, now: 1)
        _ = try catalog.addIteration(to: "momentree", number: nil, label: "paper", now: 2)
        try catalog.addTask(to: "momentree", StudyTask(name: "Tag a face", success: .view("PersonViewController"), expectedPath: ["TreeViewController", "PersonViewController"]))
        try catalog.addTask(to: "momentree", StudyTask(name: "Add a photo, then share it", timeLimit: 90, success: .event("PhotoShared")))
        try catalog.addParticipant(to: "momentree", Participant(code: "P01", attributes: ["experience": "novice"], created: 3))
        try catalog.addQuestion(to: "momentree", StudyQuestion(id: "names", text: "Where did you look for your own name?"))
        return catalog
    }

    @Test func aFreshCatalogIsAtTheCurrentVersionAndReadsBackWhatWasAdded() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let catalog = try catalog()
        #expect(catalog.migrated == ["version 1: sessions and devices (muEval 0.1.0)", "version 2: studies, questionnaires, sessions' study assignment",
                                     "version 3: imported sessions' source files", "version 4: studies' recruitment and invitations",
                                     "version 5: studies' web apps"])
        #expect(!FileManager.default.fileExists(atPath: directory + "/catalog.sqlite.v0.bak"), "nothing to keep from an empty catalog")
        let study = try catalog.study("momentree")
        #expect(study.iterations.map(\.label) == ["paper"])
        #expect(study.tasks.map(\.name) == ["Tag a face", "Add a photo, then share it"])
        #expect(study.tasks[0].expectedPath == ["TreeViewController", "PersonViewController"])
        #expect(study.tasks[1].timeLimit == 90)
        #expect(study.tasks[1].success == .event("PhotoShared"))
        #expect(study.participants == [Participant(code: "P01", attributes: ["experience": "novice"], created: 3)])
        #expect(try Catalog(directory: directory).migrated.isEmpty, "a second open migrates nothing")
    }

    @Test func aWebAppIsNamedChangedAndRemovedAndOnlyAnAbsoluteHTTPURLIsTaken() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let catalog = try catalog()
        #expect(try catalog.study("momentree").webApp == nil)
        let app = "https://lab.example.org/notes/?lang=en#start"
        #expect(try catalog.createStudy(name: "webnotes", appId: nil, description: nil, webApp: app, now: 4).webApp == app)
        #expect(try catalog.study("webnotes").webApp == app)
        #expect(try catalog.setWebApp("http://192.168.1.20:8000/", of: "momentree").webApp == "http://192.168.1.20:8000/")
        #expect(try catalog.setWebApp(nil, of: "webnotes").webApp == nil)
        #expect(try catalog.study("webnotes").webApp == nil)
        #expect(throws: StudyError.noStudy("elsewhere")) { _ = try catalog.setWebApp(app, of: "elsewhere") }

        for bad in ["lab.example.org/notes", "/notes", "ftp://lab.example.org/", "javascript:alert(1)", "https://", "https:notes",
                    "https://lab.example.org/my notes", "https://alice:secret@lab.example.org/", "https://lab.example.org/\nx"] {
            #expect(throws: StudyError.badWebApp(bad), "\(bad)") { _ = try catalog.setWebApp(bad, of: "momentree") }
            #expect(throws: StudyError.badWebApp(bad), "\(bad)") { _ = try catalog.createStudy(name: "other", appId: nil, description: nil, webApp: bad, now: 5) }
        }
        let long = "https://lab.example.org/" + String(repeating: "a", count: 2048)
        #expect(throws: StudyError.tooLong(what: "a study's web app URL", limit: 2048)) { _ = try catalog.setWebApp(long, of: "momentree") }
        #expect(try catalog.study("momentree").webApp == "http://192.168.1.20:8000/", "a refused URL changes nothing")
        #expect(throws: StudyError.noStudy("other")) { _ = try catalog.study("other") }
        #expect(StudyError.badWebApp("lab.example.org/a\nb").description == #""lab.example.org/a\nb" cannot be a study's web app: "#
                + "give an absolute http:// or https:// URL without a user name or password, such as https://lab.example.org/notes/")
    }

    /// A catalog of the version before (4) gains the column, keeps its studies (without a web app), and is copied aside first.
    @Test func aCatalogOfVersion4KeepsItsStudiesWithoutAWebApp() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let before = try catalog().study("momentree")
        let database = try SQLiteDatabase(path: directory + "/catalog.sqlite")
        try database.execute("ALTER TABLE studies DROP COLUMN web_app; PRAGMA user_version = 4")
        let migrated = try Catalog(directory: directory)
        #expect(migrated.migrated == ["version 5: studies' web apps"])
        #expect(try migrated.study("momentree") == before)
        #expect(try migrated.studies().map(\.name) == ["momentree"])
        #expect(FileManager.default.fileExists(atPath: directory + "/catalog.sqlite.v4.bak"))
        #expect(try migrated.setWebApp("https://lab.example.org/", of: "momentree").webApp == "https://lab.example.org/")
    }

    @Test func answersAreStoredAllOrNoneAndAnswerAgainCorrects() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let catalog = try catalog()
        let sus = try SUSResponse(iteration: 1, participant: "P01", items: [3, 3, 3, 3, 3, 3, 3, 3, 3, 3], recorded: 10)
        let badSEQ = try SEQResponse(iteration: 1, participant: "P01", task: "Fly", rating: 4, recorded: 10)
        #expect(throws: StudyError.noTask(study: "momentree", task: "Fly")) {
            try catalog.record(StudyResponses(sus: [sus], seq: [badSEQ]), in: "momentree")
        }
        #expect(try catalog.studyData("momentree").responses == StudyResponses(), "the SUS answers went with the bad SEQ answer")
        try catalog.record(StudyResponses(sus: [sus]), in: "momentree")
        let corrected = try SUSResponse(iteration: 1, participant: "P01", items: [5, 1, 5, 1, 5, 1, 5, 1, 5, 1], recorded: 11)
        try catalog.record(StudyResponses(sus: [corrected]), in: "momentree")
        #expect(try catalog.studyData("momentree").responses.sus == [corrected])
        #expect(throws: StudyError.noIteration(study: "momentree", iteration: 2)) {
            try catalog.record(StudyResponses(sus: [try SUSResponse(iteration: 2, participant: "P01", items: corrected.items, recorded: 12)]), in: "momentree")
        }
    }

    @Test func answersOutOfRangeOrMissingNameTheirItem() {
        #expect(throws: StudyError.answerOutOfRange(questionnaire: "SUS", item: "item 3", value: 0, scale: 1...5)) {
            try SUSResponse(iteration: 1, participant: "P01", items: [1, 2, 0, 4, 5, 1, 2, 3, 4, 5], recorded: 0)
        }
        #expect(throws: StudyError.incompleteAnswer(questionnaire: "SUS", item: "item 9")) {
            try SUSResponse(iteration: 1, participant: "P01", items: [1, 2, 3, 4, 5, 1, 2, 3], recorded: 0)
        }
        #expect(throws: StudyError.tooManyAnswers(questionnaire: "SUS", given: 11, expected: 10)) {
            try SUSResponse(iteration: 1, participant: "P01", items: Array(repeating: 3, count: 11), recorded: 0)
        }
        #expect(throws: StudyError.answerOutOfRange(questionnaire: "SEQ", item: "task \"Tag a face\"", value: 0, scale: 1...7)) {
            try SEQResponse(iteration: 1, participant: "P01", task: "Tag a face", rating: 0, recorded: 0)
        }
        #expect(StudyError.answerOutOfRange(questionnaire: "SUS", item: "item 3", value: 0, scale: 1...5).description
                == "SUS item 3 is 0: answers go from 1 to 5")
    }

    @Test func answersArrivingAsJSONAreCheckedLikeTypedOnes() {
        let decoder = JSONDecoder()
        #expect(throws: StudyError.incompleteAnswer(questionnaire: "SUS", item: "item 4")) {
            try decoder.decode(SUSResponse.self, from: Data(#"{"iteration":1,"participant":"P01","items":[1,2,3],"recorded":0}"#.utf8))
        }
        #expect(throws: StudyError.answerOutOfRange(questionnaire: "SEQ", item: "task \"T\"", value: 9, scale: 1...7)) {
            try decoder.decode(SEQResponse.self, from: Data(#"{"iteration":1,"participant":"P01","task":"T","rating":9,"recorded":0}"#.utf8))
        }
        #expect(throws: StudyError.incompleteAnswer(questionnaire: "questions", item: "question \"q1\"")) {
            try decoder.decode(QuestionAnswer.self, from: Data(#"{"iteration":1,"participant":"P01","question":"q1","text":" ","recorded":0}"#.utf8))
        }
    }

    @Test(arguments: [("event:PostPublished", TaskSuccess.event("PostPublished")), ("view:Posts:Detail", .view("Posts:Detail")), ("observer", .observer)])
    func successCriteriaReadAndWriteAsText(text: String, criterion: TaskSuccess) throws {
        #expect(try TaskSuccess(text) == criterion)
        #expect(criterion.description == text)
    }

    @Test func namesAreCheckedBeforeAnythingIsStored() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let catalog = try catalog()
        #expect(throws: StudyError.badName(what: "participant code", name: "../P01")) {
            try catalog.addParticipant(to: "momentree", Participant(code: "../P01", created: 0))
        }
        #expect(throws: StudyError.taskExists(study: "momentree", task: "Tag a face")) {
            try catalog.addTask(to: "momentree", StudyTask(name: "Tag a face"))
        }
        #expect(throws: StudyError.badTaskName("line\nbreak")) { try catalog.addTask(to: "momentree", StudyTask(name: "line\nbreak")) }
        #expect(throws: StudyError.noStudy("elsewhere")) { _ = try catalog.addIteration(to: "elsewhere", number: nil, label: nil, now: 0) }
        #expect(throws: StudyError.badIteration(0)) { _ = try catalog.addIteration(to: "momentree", number: 0, label: nil, now: 0) }
        #expect(try catalog.study("momentree").participants.count == 1)
    }
}

/// Recruitment and invitations in the catalog: stored all or none with their participants, found by code,
/// session and participant, expired lazily, completed once.
@Suite struct RecruitmentCatalogTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("recruitment-catalog-\(UUID().uuidString)").path

    private func catalog() throws -> Catalog {
        let catalog = try Catalog(directory: directory)
        _ = try catalog.createStudy(name: "remote", appId: nil, description: nil, now: 1)
        _ = try catalog.addIteration(to: "remote", number: nil, label: nil, now: 2)
        return catalog
    }

    private func invitation(_ code: String, _ participant: String, expires: Double = 100) -> Invitation {
        Invitation(code: code, study: "remote", iteration: 1, participant: participant, created: 10, expires: expires)
    }

    @Test func invitationsAreStoredWithTheirParticipantsAndReadBack() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let catalog = try catalog()
        let recruitment = Recruitment(study: "remote", iteration: 1, target: 2, deadline: 500, created: 10, seed: .max)
        try catalog.createInvitations([invitation("aaaaaaaaaa", "TAAAAA"), invitation("bbbbbbbbbb", "TBBBBB", expires: 20)],
                                      participants: [Participant(code: "TAAAAA", attributes: ["gender": "female"], created: 10),
                                                     Participant(code: "TBBBBB", created: 10)],
                                      recruitment: recruitment)
        #expect(try catalog.recruitment(study: "remote") == recruitment, "the seed's top bit survives the signed column")
        #expect(try catalog.invitations(study: "remote").map(\.participant) == ["TAAAAA", "TBBBBB"])
        #expect(try catalog.study("remote").participant("TAAAAA")?.attributes == ["gender": "female"])

        let accepted = try catalog.apply([InvitationTransition(code: "aaaaaaaaaa", from: [.invited], to: .accepted, session: 7, device: "phone-1")])
        #expect(accepted.map(\.status) == [.accepted] && accepted.first?.sessionId == 7 && accepted.first?.deviceId == "phone-1")
        let recording = try catalog.apply([InvitationTransition(code: "aaaaaaaaaa", from: [.accepted], to: .recording)])
        #expect(recording.first?.sessionId == 7 && recording.first?.deviceId == "phone-1", "nil leaves session and device as they were")
        #expect(try catalog.apply([InvitationTransition(code: "aaaaaaaaaa", from: [.invited], to: .expired)]).isEmpty,
                "a transition from another status is not stored")
        #expect(try catalog.invitation(code: "aaaaaaaaaa")?.status == .recording)
        #expect(try catalog.invitation(sessionId: 7)?.code == "aaaaaaaaaa")
        #expect(try catalog.invitations(participant: "TBBBBB").map(\.code) == ["bbbbbbbbbb"])
        #expect(throws: RecruitmentError.noInvitation("cccccccccc")) {
            try catalog.apply([InvitationTransition(code: "bbbbbbbbbb", from: [.invited], to: .expired),
                               InvitationTransition(code: "cccccccccc", from: [.recording], to: .done)])
        }
        #expect(try catalog.invitation(code: "bbbbbbbbbb")?.status == .invited, "all or none")

        let completed = try catalog.updateRecruitment(study: "remote") {
            var completed = $0
            (completed.completed, completed.completionReason, completed.report) = (30, .target, "/r/index.html")
            return completed
        }
        #expect(completed.completed == 30 && completed.completionReason == .target && completed.report == "/r/index.html")
        #expect(try catalog.recruitments() == [completed])
    }

    /// Issue 54: a status this muevald does not know (a newer one's, a hand edit) is refused naming it, where it was
    /// taken for `invited` before, an invitation a phone could then present again.
    @Test func anUnknownStoredStatusIsRefusedNamingIt() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let catalog = try catalog()
        try catalog.createInvitations([invitation("aaaaaaaaaa", "TAAAAA")], participants: [Participant(code: "TAAAAA", created: 10)],
                                      recruitment: Recruitment(study: "remote", iteration: 1, target: 1, created: 10, seed: 1))
        let path = directory + "/" + Catalog.fileName
        try SQLiteDatabase(path: path).execute("UPDATE invitations SET status = 'paused' WHERE code = 'aaaaaaaaaa'")
        let refusal = CatalogError.unknownInvitationStatus(path: path, code: "aaaaaaaaaa", status: "paused")
        #expect(throws: refusal) { try catalog.invitations(study: "remote") }
        #expect(throws: refusal) { try catalog.invitation(code: "aaaaaaaaaa") }
        #expect(refusal.description == path + #": invitation "aaaaaaaaaa" has the status "paused", which this muevald does not know "#
            + "(it knows invited, accepted, recording, done, expired, withdrawn): a newer muEval wrote it, or the catalog was edited; "
            + "run the newer muevald, or give the invitation one of these statuses")
    }

    @Test func aRecruitmentIsAllOrNone() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let catalog = try catalog()
        try catalog.addParticipant(to: "remote", Participant(code: "TBBBBB", created: 1))
        #expect(throws: StudyError.participantExists(study: "remote", participant: "TBBBBB")) {
            try catalog.createInvitations([self.invitation("aaaaaaaaaa", "TAAAAA")],
                                          participants: [Participant(code: "TAAAAA", created: 10), Participant(code: "TBBBBB", created: 10)],
                                          recruitment: Recruitment(study: "remote", iteration: 1, target: 2, created: 10, seed: 1))
        }
        #expect(try catalog.invitations(study: "remote").isEmpty)
        #expect(try catalog.recruitment(study: "remote") == nil)
        #expect(try catalog.study("remote").participant("TAAAAA") == nil)
        #expect(throws: StudyError.noIteration(study: "remote", iteration: 3)) {
            try catalog.createInvitations([], participants: [], recruitment: Recruitment(study: "remote", iteration: 3, target: 1, created: 10, seed: 1))
        }
        #expect(throws: RecruitmentError.noRecruitment(study: "remote")) {
            try catalog.updateRecruitment(study: "remote") { $0 }
        }
        #expect(Invitation.isCode("23456789ab") && !Invitation.isCode("0123456789") && !Invitation.isCode("abc"))
        var generator = SystemRandomNumberGenerator()
        #expect(Invitation.isCode(Invitation.newCode(using: &generator)))
    }
}

import Foundation
import JournalStorage
import NIOConcurrencyHelpers
import SessionModel
import TesterPool
import Testing

/// The pool's store on a real testers.sqlite: settings, enrolment checks, withdrawal.
@Suite struct TesterStoreTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tester-store-\(UUID().uuidString)").path
    let fields = [PoolField(name: "gender", label: "Gender", choices: ["female", "male", "diverse"]),
                  PoolField(name: "language", label: "First language")]

    private func store(_ limits: PoolLimits = PoolLimits()) throws -> TesterStore {
        let store = try TesterStore(directory: directory, limits: limits)
        _ = try store.configure(consent: "We record touches, the screen, voice and face.", fields: fields, now: 1)
        return store
    }

    @Test func settingsVersionTheConsentAndSurviveAReopen() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let unconfigured = try TesterStore(directory: directory)
        #expect(throws: PoolError.notConfigured) { try unconfigured.enrol(profile: [:], consentVersion: 0, now: 0) }
        let store = try store()
        #expect(try store.settings().consentVersion == 1)
        #expect(try store.configure(consent: nil, fields: fields, now: 2).consentVersion == 1, "the same text is no new version")
        #expect(try store.configure(consent: "Changed text.", fields: nil, now: 3).consentVersion == 2)
        let key = try store.settings().enrolmentKey
        let rotated = try store.rotateEnrolmentKey(now: 4)
        #expect(rotated.enrolmentKey != key)
        #expect(throws: PoolError.wrongEnrolmentKey) { try store.checkEnrolmentKey(key) }
        try store.checkEnrolmentKey(rotated.enrolmentKey)
        #expect(try TesterStore(directory: directory).settings() == rotated)
        let mode = try FileManager.default.attributesOfItem(atPath: directory + "/testers.sqlite")[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    /// What the lab configures and testers answer is bound into SQL, never spliced: quotes come back as written,
    /// and the enrolment key written at creation stays when the file is opened again. A field name with a quote
    /// is refused, as every name outside letters, digits and `-_.` is.
    @Test func quotesInSettingsAndAnswersAreStoredAsWritten() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try TesterStore(directory: directory)
        let key = try store.settings().enrolmentKey
        let consent = "We record what you say ('think aloud'); \"stop\" ends it.'); DROP TABLE testers; --"
        let quoted = [PoolField(name: "nickname", label: "Tester's \"nickname\""), PoolField(name: "tea", label: "Tea?", choices: ["'yes'", "\"no\""])]
        let settings = try store.configure(consent: consent, fields: quoted, now: 1)
        #expect(settings.consent == consent && settings.fields == quoted)
        #expect(throws: StudyError.badName(what: "profile field name", name: "tester's")) {
            try store.configure(consent: nil, fields: [PoolField(name: "tester's", label: "Name")], now: 2)
        }
        let enrolment = try store.enrol(profile: ["nickname": "O'Brien", "tea": "'yes'"], consentVersion: 1, now: 3)
        let reopened = try TesterStore(directory: directory)
        #expect(try reopened.settings() == settings && settings.enrolmentKey == key)
        #expect(try reopened.tester(enrolment.tester.code).profile == ["nickname": "O'Brien", "tea": "'yes'"])
    }

    @Test func enrolmentChecksTheProfileAgainstTheFields() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var limits = PoolLimits()
        limits.maxProfileText = 14
        limits.maxTesters = 2
        let store = try store(limits)
        #expect(throws: PoolError.unknownField("age", known: ["gender", "language"])) {
            try store.enrol(profile: ["gender": "female", "language": "de", "age": "30"], consentVersion: 1, now: 5)
        }
        #expect(throws: PoolError.notAChoice(field: "gender", value: "f", choices: ["female", "male", "diverse"])) {
            try store.enrol(profile: ["gender": "f", "language": "de"], consentVersion: 1, now: 5)
        }
        #expect(throws: PoolError.tooLong(what: "the answer to \"First language\"", limit: 14)) {
            try store.enrol(profile: ["gender": "male", "language": "Plattdeutsch (Low German)"], consentVersion: 1, now: 5)
        }
        #expect(throws: PoolError.controlCharacters(what: "the answer to \"First language\"")) {
            try store.enrol(profile: ["gender": "male", "language": "de\u{1B}[2J"], consentVersion: 1, now: 5)
        }
        #expect(throws: PoolError.missingField("language", label: "First language")) {
            try store.enrol(profile: ["gender": "male"], consentVersion: 1, now: 5)
        }
        #expect(throws: PoolError.consentChanged(agreed: 0, current: 1)) {
            try store.enrol(profile: ["gender": "male", "language": "de"], consentVersion: 0, now: 5)
        }
        #expect(PoolError.notAChoice(field: "gender", value: "f", choices: ["female", "male"]).description
                == "\"f\" is not a choice of gender: give one of female, male")
        let enrolment = try store.enrol(profile: ["gender": "female", "language": " en "], consentVersion: 1, now: 5)
        #expect(enrolment.tester.code.count == 6 && enrolment.tester.code.hasPrefix("T"))
        #expect(enrolment.tester.profile == ["gender": "female", "language": "en"])
        #expect(try store.testers() == [enrolment.tester])
        _ = try store.enrol(profile: ["gender": "male", "language": "de"], consentVersion: 1, now: 6)
        #expect(throws: PoolError.poolFull(limit: 2)) { try store.enrol(profile: ["gender": "male", "language": "de"], consentVersion: 1, now: 7) }
    }

    @Test func withdrawalIsRecordedFirstAndDeletesTheProfileLast() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try store()
        let enrolment = try store.enrol(profile: ["gender": "diverse", "language": "Esperanto"], consentVersion: 1, now: 5)
        let staying = try store.enrol(profile: ["gender": "male", "language": "de"], consentVersion: 1, now: 5)
        let code = enrolment.tester.code
        #expect(throws: PoolError.wrongSecret) { try store.requestWithdrawal(code, secret: "not-the-secret", deleteRecordings: false, now: 6) }
        #expect(throws: PoolError.wrongSecret) { try store.requestWithdrawal("TZZZZZ", secret: enrolment.withdrawalSecret, deleteRecordings: false, now: 6) }
        #expect(throws: PoolError.noTester("TZZZZZ")) { try store.requestWithdrawal("TZZZZZ", secret: nil, deleteRecordings: false, now: 6) }
        let file = try Data(contentsOf: URL(fileURLWithPath: directory + "/testers.sqlite"))
        #expect(file.range(of: Data(enrolment.withdrawalSecret.utf8)) == nil, "only the secret's hash is stored")

        // Recorded: pending, the profile kept (not recruited any more), the secret still valid; asking again
        // adds the deletion of the recordings and keeps the first request's time.
        let request = try store.requestWithdrawal(code, secret: enrolment.withdrawalSecret, deleteRecordings: false, now: 6)
        #expect(request.tester == enrolment.tester && request.finished == nil && !request.deleteRecordings)
        #expect(try store.testers() == [staying.tester], "a leaving tester is recruited no more")
        let again = try store.requestWithdrawal(code, secret: enrolment.withdrawalSecret, deleteRecordings: true, now: 7)
        #expect(again.deleteRecordings && again.requested == 6)
        #expect(try store.requestWithdrawal(code, secret: nil, deleteRecordings: false, now: 8).deleteRecordings, "never taken back")

        // A reopened store (muevald's next start) still has it pending.
        let reopened = try TesterStore(directory: directory)
        #expect(try reopened.pendingWithdrawals().map(\.code) == [code])
        #expect(try reopened.pendingWithdrawals().first?.tester == enrolment.tester)
        try reopened.finishWithdrawal(code, now: 9)
        try reopened.finishWithdrawal(code, now: 10)
        #expect(try reopened.pendingWithdrawals().isEmpty)
        #expect(throws: PoolError.noTester(code)) { try reopened.tester(code) }
        #expect(throws: PoolError.noTester(code)) { try reopened.requestWithdrawal(code, secret: nil, deleteRecordings: false, now: 11) }
        // The tester's retry after the end hears that it finished; a wrong secret still hears nothing.
        let finished = try reopened.requestWithdrawal(code, secret: enrolment.withdrawalSecret, deleteRecordings: true, now: 11)
        #expect(finished.finished == 9 && finished.tester == nil)
        #expect(throws: PoolError.wrongSecret) { try reopened.requestWithdrawal(code, secret: "not-the-secret", deleteRecordings: false, now: 11) }
        for name in ["testers.sqlite", "testers.sqlite-wal"] {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))) ?? Data()
            #expect(bytes.range(of: Data("Esperanto".utf8)) == nil, "\(name) keeps no trace of the withdrawn profile")
        }
    }

    @Test func newCodesAvoidTestersWithdrawnTestersAndTheCatalogsParticipants() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The codes drawn, in this order, over and over.
        let drawn = NIOLockedValueBox(0)
        let sequence = ["T22222", "T33333", "T22222", "T33333", "T44444", "T55555"]
        let codes = TesterCodeSource { drawn.withLockedValue { count in defer { count += 1 }; return sequence[count % sequence.count] } }
        let store = try TesterStore(directory: directory, codes: codes, codeTakenElsewhere: { $0 == "T44444" })
        _ = try store.configure(consent: "We record the screen.", fields: fields, now: 1)
        let profile = ["gender": "female", "language": "en"]
        #expect(try store.enrol(profile: profile, consentVersion: 1, now: 2).tester.code == "T22222")
        #expect(try store.enrol(profile: profile, consentVersion: 1, now: 2).tester.code == "T33333")
        _ = try store.requestWithdrawal("T33333", secret: nil, deleteRecordings: true, now: 3)
        try store.finishWithdrawal("T33333", now: 3)
        // T22222 is a tester, T33333 a withdrawn one, T44444 a participant of a study: T55555 it is.
        #expect(try store.enrol(profile: profile, consentVersion: 1, now: 4).tester.code == "T55555")
        // Every code taken: refused after a bounded number of draws, not a hang.
        #expect(throws: PoolError.noFreeCode) { try store.enrol(profile: profile, consentVersion: 1, now: 5) }
    }

    @Test func answersRefuseDirectionAndLineSeparatorCharacters() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try store()
        for (scalar, name) in [(0x202E, "U+202E"), (0x202A, "U+202A"), (0x2066, "U+2066"), (0x2069, "U+2069"), (0x200E, "U+200E"),
                               (0x200F, "U+200F"), (0x061C, "U+61C"), (0x2028, "U+2028"), (0x2029, "U+2029")] {
            let answer = "de" + String(Unicode.Scalar(scalar)!) + "nalg"
            #expect(throws: PoolError.layoutCharacter(what: "the answer to \"First language\"", scalar: name)) {
                try store.enrol(profile: ["gender": "male", "language": answer], consentVersion: 1, now: 5)
            }
        }
        #expect(throws: PoolError.controlCharacters(what: "the answer to \"First language\"")) {
            try store.enrol(profile: ["gender": "male", "language": "de\u{85}x"], consentVersion: 1, now: 5)
        }
        #expect(PoolError.layoutCharacter(what: "the answer to \"First language\"", scalar: "U+202E").description
                == "the answer to \"First language\" has the invisible character U+202E, which breaks the line or reverses the text around it: give one line of plain text")
        #expect(throws: PoolError.layoutCharacter(what: "the label of nick", scalar: "U+2067")) {
            try store.configure(consent: nil, fields: [PoolField(name: "nick", label: "Nick\u{2067}name")], now: 2)
        }
        // Right-to-left text itself is an answer like any other.
        #expect(try store.enrol(profile: ["gender": "male", "language": "עברית"], consentVersion: 1, now: 5).tester.profile["language"] == "עברית")
    }

    @Test func fieldsAreParsedAndChecked() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try PoolField(parsing: "gender=Gender:female, male") == PoolField(name: "gender", label: "Gender", choices: ["female", "male"]))
        #expect(try PoolField(parsing: "language=First language") == PoolField(name: "language", label: "First language"))
        #expect(throws: PoolError.badField("gender")) { try PoolField(parsing: "gender") }
        #expect(throws: PoolError.badField("gender=Gender:a,,b")) { try PoolField(parsing: "gender=Gender:a,,b") }
        let store = try TesterStore(directory: directory)
        #expect(throws: PoolError.duplicateField("a")) {
            try store.configure(consent: nil, fields: [PoolField(name: "a", label: "A"), PoolField(name: "a", label: "B")], now: 1)
        }
        #expect(throws: StudyError.badName(what: "profile field name", name: "a b")) {
            try store.configure(consent: nil, fields: [PoolField(name: "a b", label: "A")], now: 1)
        }
    }

    /// A pool written before issue 38 (schema 1, no `withdrawals`) opens with its testers, and withdraws.
    @Test func aPoolOfSchemaOneIsUpgradedWithItsTesters() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        do {
            let old = try SQLiteDatabase(path: directory + "/" + TesterStore.fileName)
            try old.execute("""
                CREATE TABLE consents (version INTEGER PRIMARY KEY, text TEXT NOT NULL, created REAL NOT NULL);
                CREATE TABLE settings (id INTEGER PRIMARY KEY CHECK (id = 1), fields TEXT NOT NULL, enrolment_key TEXT NOT NULL,
                                       updated REAL NOT NULL);
                CREATE TABLE testers (code TEXT PRIMARY KEY, profile TEXT NOT NULL, consent_version INTEGER NOT NULL,
                                      enrolled REAL NOT NULL, secret_sha256 TEXT NOT NULL);
                INSERT INTO consents VALUES (1, 'We record touches.', 1);
                INSERT INTO settings VALUES (1, '[]', 'abcdefghijklmnop', 1);
                INSERT INTO testers VALUES ('T2345A', '{"language":"Esperanto"}', 1, 1, 'not a real hash');
                PRAGMA user_version = 1;
                """)
        }
        let store = try TesterStore(directory: directory)
        #expect(try store.tester("T2345A").profile == ["language": "Esperanto"])
        #expect(try store.settings().consentVersion == 1)
        let request = try store.requestWithdrawal("T2345A", secret: nil, deleteRecordings: true, now: 2)
        #expect(request.deleteRecordings)
        #expect(try store.pendingWithdrawals().map(\.code) == ["T2345A"])
        try store.finishWithdrawal("T2345A", now: 3)
        #expect(try store.testers().isEmpty)
        #expect(try store.pendingWithdrawals().isEmpty)
    }
}

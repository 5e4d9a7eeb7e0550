import Foundation
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

    @Test func withdrawalDeletesTheProfileAndNeedsTheSecretFromTheTester() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try store()
        let enrolment = try store.enrol(profile: ["gender": "diverse", "language": "Esperanto"], consentVersion: 1, now: 5)
        let code = enrolment.tester.code
        #expect(throws: PoolError.wrongSecret) { try store.withdraw(code, secret: "not-the-secret") }
        #expect(throws: PoolError.wrongSecret) { try store.withdraw("TZZZZZ", secret: enrolment.withdrawalSecret) }
        let file = try Data(contentsOf: URL(fileURLWithPath: directory + "/testers.sqlite"))
        #expect(file.range(of: Data(enrolment.withdrawalSecret.utf8)) == nil, "only the secret's hash is stored")
        #expect(try store.withdraw(code, secret: enrolment.withdrawalSecret) == enrolment.tester)
        #expect(throws: PoolError.noTester(code)) { try store.tester(code) }
        #expect(throws: PoolError.noTester(code)) { try store.withdraw(code) }
        for name in ["testers.sqlite", "testers.sqlite-wal"] {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))) ?? Data()
            #expect(bytes.range(of: Data("Esperanto".utf8)) == nil, "\(name) keeps no trace of the withdrawn profile")
        }
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
}

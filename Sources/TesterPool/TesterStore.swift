internal import Crypto
internal import Foundation
internal import JournalStorage
internal import NIOConcurrencyHelpers
public import SessionModel
internal import WireProtocol

/// The tester pool (issue 32): the lab's settings and the enrolled testers' profiles, in
/// DATA/testers.sqlite, apart from the recordings (docs/SECURITY.md "The tester pool").
///
/// Deleted rows are overwritten (`secure_delete`) and the write-ahead log is emptied after a
/// withdrawal, so that a withdrawn profile does not linger in the file's free pages.
public final class TesterStore: @unchecked Sendable {
    public static let fileName = "testers.sqlite"
    public let limits: PoolLimits
    private let database: SQLiteDatabase
    private let lock = NIOLock()

    /// Opens (creating when needed) `directory`/testers.sqlite, readable by the daemon's user only.
    public init(directory: String, limits: PoolLimits = PoolLimits()) throws {
        self.limits = limits
        try DataDirectory.prepare(directory)
        let path = directory + "/" + Self.fileName
        database = try SQLiteDatabase(path: path)
        try database.execute("""
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = FULL;
            PRAGMA secure_delete = ON;
            """)
        try DataDirectory.restrict(path)
        try PoolSchema.create(database)
        try database.execute("""
            INSERT OR IGNORE INTO settings (id, fields, enrolment_key, updated) VALUES (1, '[]', '\(PoolCode.enrolmentKey())', 0)
            """)
    }

    // MARK: Settings

    public func settings() throws -> PoolSettings {
        try lock.withLock { try loadSettings() }
    }

    /// Replaces the consent text (a new version when it differs) and the profile fields, each when given.
    public func configure(consent: String?, fields: [PoolField]?, now: Double) throws -> PoolSettings {
        if let consent { try checkConsent(consent) }
        if let fields { try checkFields(fields) }
        return try lock.withLock {
            let current = try loadSettings()
            try database.transaction {
                if let consent, consent != current.consent {
                    let statement = try database.prepare("INSERT INTO consents (version, text, created) VALUES (?, ?, ?)")
                    statement.bind([.integer(Int64(current.consentVersion + 1)), .text(consent), .real(now)])
                    try statement.run()
                }
                let statement = try database.prepare("UPDATE settings SET fields = ?, updated = ? WHERE id = 1")
                statement.bind([.text(try json(fields ?? current.fields)), .real(now)])
                try statement.run()
            }
            return try loadSettings()
        }
    }

    /// A new enrolment key: the old link stops working.
    public func rotateEnrolmentKey(now: Double) throws -> PoolSettings {
        try lock.withLock {
            let statement = try database.prepare("UPDATE settings SET enrolment_key = ?, updated = ? WHERE id = 1")
            statement.bind([.text(PoolCode.enrolmentKey()), .real(now)])
            try statement.run()
            return try loadSettings()
        }
    }

    /// Throws unless `key` is the current enrolment key (compared in constant time).
    public func checkEnrolmentKey(_ key: String) throws {
        guard constantTimeEqual(key, try settings().enrolmentKey) else { throw PoolError.wrongEnrolmentKey }
    }

    // MARK: Testers

    /// Enrols a tester who agreed to consent version `consentVersion` with this profile: every field
    /// answered, choices among the field's, free text within `limits.maxProfileText`.
    public func enrol(profile: [String: String], consentVersion: Int, now: Double) throws -> Enrolment {
        try lock.withLock {
            let settings = try loadSettings()
            guard settings.consentVersion > 0 else { throw PoolError.notConfigured }
            guard consentVersion == settings.consentVersion else {
                throw PoolError.consentChanged(agreed: consentVersion, current: settings.consentVersion)
            }
            let profile = try ProfileCheck(fields: settings.fields, limits: limits).checked(profile)
            guard try count() < limits.maxTesters else { throw PoolError.poolFull(limit: limits.maxTesters) }
            var code = PoolCode.tester()
            while try load(code) != nil { code = PoolCode.tester() }
            let secret = PoolCode.withdrawalSecret()
            let tester = Tester(code: code, profile: profile, consentVersion: consentVersion, enrolled: now)
            let statement = try database.prepare("""
                INSERT INTO testers (code, profile, consent_version, enrolled, secret_sha256) VALUES (?, ?, ?, ?, ?)
                """)
            statement.bind([.text(code), .text(try json(profile)), .integer(Int64(consentVersion)), .real(now), .text(PoolCode.hash(secret))])
            try statement.run()
            return Enrolment(tester: tester, withdrawalSecret: secret)
        }
    }

    /// Every tester, by code.
    public func testers() throws -> [Tester] {
        try lock.withLock {
            let statement = try database.prepare("SELECT code, profile, consent_version, enrolled FROM testers ORDER BY code")
            var testers: [Tester] = []
            try statement.forEachRow { testers.append(Self.tester(from: $0)) }
            return testers
        }
    }

    public func tester(_ code: String) throws -> Tester {
        try lock.withLock {
            guard let tester = try load(code) else { throw PoolError.noTester(code) }
            return tester
        }
    }

    /// Deletes the tester's profile and returns it as it was (the lab's `muevalctl pool withdraw`).
    public func withdraw(_ code: String) throws -> Tester {
        try lock.withLock { try delete(code) }
    }

    /// The tester's own withdrawal: the code with the secret shown at enrolment.
    public func withdraw(_ code: String, secret: String) throws -> Tester {
        try lock.withLock {
            let statement = try database.prepare("SELECT secret_sha256 FROM testers WHERE code = ?")
            defer { statement.reset() }
            statement.bind(1, code)
            // One answer for an unknown code and a wrong secret: the page does not reveal which codes exist.
            guard try statement.step(), constantTimeEqual(PoolCode.hash(secret), statement.string(0) ?? "") else { throw PoolError.wrongSecret }
            statement.reset()
            return try delete(code)
        }
    }

    // MARK: Under the lock

    private func delete(_ code: String) throws -> Tester {
        guard let tester = try load(code) else { throw PoolError.noTester(code) }
        let statement = try database.prepare("DELETE FROM testers WHERE code = ?")
        statement.bind(1, code)
        try statement.run()
        // The deleted pages are zeroed (secure_delete); the log's copy goes with the checkpoint.
        try database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return tester
    }

    private func count() throws -> Int {
        let statement = try database.prepare("SELECT COUNT(*) FROM testers")
        defer { statement.reset() }
        _ = try statement.step()
        return Int(statement.int64(0))
    }

    private func load(_ code: String) throws -> Tester? {
        let statement = try database.prepare("SELECT code, profile, consent_version, enrolled FROM testers WHERE code = ?")
        defer { statement.reset() }
        statement.bind(1, code)
        return try statement.step() ? Self.tester(from: statement) : nil
    }

    private static func tester(from row: SQLiteStatement) -> Tester {
        Tester(code: row.string(0) ?? "", profile: decode([String: String].self, row.string(1)) ?? [:],
               consentVersion: Int(row.int64(2)), enrolled: row.double(3))
    }

    private func loadSettings() throws -> PoolSettings {
        let statement = try database.prepare("""
            SELECT s.fields, s.enrolment_key, s.updated, c.version, c.text
            FROM settings s LEFT JOIN consents c ON c.version = (SELECT MAX(version) FROM consents) WHERE s.id = 1
            """)
        defer { statement.reset() }
        _ = try statement.step()
        return PoolSettings(consent: statement.string(4) ?? "", consentVersion: Int(statement.int64(3)),
                            fields: Self.decode([PoolField].self, statement.string(0)) ?? [],
                            enrolmentKey: statement.string(1) ?? "", updated: statement.double(2))
    }

    // MARK: Checks of the lab's settings

    private func checkConsent(_ consent: String) throws {
        guard consent.contains(where: { !$0.isWhitespace }) else { throw PoolError.notConfigured }
        guard consent.utf8.count <= limits.maxConsentBytes else { throw PoolError.tooLong(what: "the consent text", limit: limits.maxConsentBytes) }
    }

    private func checkFields(_ fields: [PoolField]) throws {
        guard fields.count <= limits.maxFields else { throw PoolError.tooMany(what: "profile fields", limit: limits.maxFields) }
        let check = ProfileCheck(fields: [], limits: limits)
        var names: Set<String> = []
        for field in fields {
            try StudyError.checkName(field.name, as: "profile field name")
            guard names.insert(field.name).inserted else { throw PoolError.duplicateField(field.name) }
            try check.text(field.label, what: "the label of \(field.name)")
            guard field.choices.count <= limits.maxFields else { throw PoolError.tooMany(what: "choices of \(field.name)", limit: limits.maxFields) }
            for choice in field.choices {
                try check.text(choice, what: "a choice of \(field.name)")
                // `|` separates a requirement's alternatives, `,` the choices on the command line.
                guard !choice.contains("|"), !choice.contains(",") else { throw PoolError.badField("\(field.name)=\(field.label):\(choice)") }
            }
        }
    }

    private func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ text: String?) -> T? {
        text.flatMap { try? JSONDecoder().decode(type, from: Data($0.utf8)) }
    }
}

/// A profile checked against the pool's fields: what an enrolling stranger typed, bounded and on one line.
struct ProfileCheck {
    let fields: [PoolField]
    let limits: PoolLimits

    func checked(_ profile: [String: String]) throws(PoolError) -> [String: String] {
        for name in profile.keys.sorted() where !fields.contains(where: { $0.name == name }) {
            throw .unknownField(name, known: fields.map(\.name))
        }
        var checked: [String: String] = [:]
        for field in fields {
            let value = profile[field.name].map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard !value.isEmpty else { throw .missingField(field.name, label: field.label) }
            if field.isFreeText {
                try text(value, what: "the answer to \"\(field.label)\"")
            } else if !field.choices.contains(value) {
                throw .notAChoice(field: field.name, value: value, choices: field.choices)
            }
            checked[field.name] = value
        }
        return checked
    }

    /// One line of at most `limits.maxProfileText` bytes: no control characters, which a terminal
    /// listing the pool would obey.
    func text(_ text: String, what: String) throws(PoolError) {
        guard text.utf8.count <= limits.maxProfileText else { throw .tooLong(what: what, limit: limits.maxProfileText) }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { throw .controlCharacters(what: what) }
    }
}

/// The pool's random strings: tester codes, withdrawal secrets, enrolment keys.
enum PoolCode {
    /// Upper case for tester codes (`T7K2QM`), without 0/1/I/L/O, which read alike.
    static let testerAlphabet = Array("23456789ABCDEFGHJKMNPQRSTUVWXYZ")

    static func tester() -> String {
        "T" + String((0..<5).map { _ in testerAlphabet.randomElement()! })
    }

    /// 16 of 31 characters, about 79 bits: not guessable, so an unsalted hash is enough to store.
    static func withdrawalSecret() -> String {
        String((0..<16).map { _ in Invitation.alphabet.randomElement()! })
    }

    static func enrolmentKey() -> String {
        withdrawalSecret()
    }

    static func hash(_ secret: String) -> String {
        lowercaseHex(SHA256.hash(data: Array(secret.utf8)))
    }
}

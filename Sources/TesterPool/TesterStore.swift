internal import Crypto
internal import Foundation
internal import JournalStorage
internal import NIOConcurrencyHelpers
public import SessionModel

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
    private let codes: TesterCodeSource
    private let codeTakenElsewhere: @Sendable (String) throws -> Bool

    /// Opens (creating when needed) `directory`/testers.sqlite, readable by the daemon's user only.
    /// `codeTakenElsewhere` says whether a code was ever a participant's outside the pool (the catalog's
    /// studies, sessions and invitations): a new tester never gets one, since withdrawing them could
    /// then delete another person's sessions.
    public init(directory: String, limits: PoolLimits = PoolLimits(), codes: TesterCodeSource = .random,
                codeTakenElsewhere: @escaping @Sendable (String) throws -> Bool = { _ in false }) throws {
        self.limits = limits
        self.codes = codes
        self.codeTakenElsewhere = codeTakenElsewhere
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
        let firstSettings = try database.prepare("INSERT OR IGNORE INTO settings (id, fields, enrolment_key, updated) VALUES (1, '[]', ?, 0)")
        firstSettings.bind(1, PoolCode.enrolmentKey())
        try firstSettings.run()
    }

    // MARK: Settings

    public func settings() throws -> PoolSettings {
        try lock.withLock { try loadSettings() }
    }

    /// Replaces the consent text (a new version when it differs) and the profile fields, each when given.
    public func configure(consent: String?, fields: [PoolField]?, now: Double) throws -> PoolSettings {
        let check = PoolSettingsCheck(limits: limits)
        if let consent { try check.consent(consent) }
        if let fields { try check.fields(fields) }
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
            let code = try freeCode()
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

    /// Every tester, by code; not those leaving (their withdrawal is recorded, not finished), whom
    /// nobody recruits any more.
    public func testers() throws -> [Tester] {
        try lock.withLock {
            let statement = try database.prepare("""
                SELECT code, profile, consent_version, enrolled FROM testers WHERE code NOT IN (SELECT code FROM withdrawals) ORDER BY code
                """)
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

    // MARK: Withdrawal

    /// Records that the tester asked to leave, before anything is deleted (`Studies.withdraw` carries it
    /// out, each step safe to repeat, and deletes the profile last with `finishWithdrawal`). With `secret`,
    /// the tester's own request: the secret shown at enrolment, which stays valid until the withdrawal
    /// finished, and after that answers that it did. Without, the lab's: the tester must still be in the pool.
    /// Asked again while pending, deleting the recordings too is added, never taken back.
    public func requestWithdrawal(_ code: String, secret: String?, deleteRecordings: Bool, now: Double) throws -> WithdrawalRecord {
        try lock.withLock {
            let tester = try load(code)
            let earlier = try withdrawal(code)
            if let secret {
                // One answer for an unknown code and a wrong secret: the page does not reveal which codes exist.
                let stored = try tester == nil ? earlier?.secretHash : secretHash(code)
                guard let stored, constantTimeEqual(PoolCode.hash(secret), stored) else { throw PoolError.wrongSecret }
            } else if tester == nil {
                throw PoolError.noTester(code)
            }
            var record: WithdrawalRecord
            if let earlier {
                record = earlier
                if earlier.finished == nil, deleteRecordings, !earlier.deleteRecordings {
                    let statement = try database.prepare("UPDATE withdrawals SET delete_recordings = 1 WHERE code = ?")
                    statement.bind(1, code)
                    try statement.run()
                    record.deleteRecordings = true
                }
            } else {
                record = WithdrawalRecord(code: code, secretHash: try secretHash(code), deleteRecordings: deleteRecordings, requested: now)
                let statement = try database.prepare("""
                    INSERT INTO withdrawals (code, secret_sha256, delete_recordings, requested) VALUES (?, ?, ?, ?)
                    """)
                statement.bind([.text(code), .text(record.secretHash), .integer(deleteRecordings ? 1 : 0), .real(now)])
                try statement.run()
            }
            record.tester = tester
            return record
        }
    }

    /// The withdrawals recorded and not finished, oldest first (muevald finishes them at start).
    public func pendingWithdrawals() throws -> [WithdrawalRecord] {
        try lock.withLock {
            let statement = try database.prepare("""
                SELECT code, secret_sha256, delete_recordings, requested, finished FROM withdrawals WHERE finished IS NULL ORDER BY requested, code
                """)
            var records = try Self.withdrawals(from: statement)
            for index in records.indices { records[index].tester = try load(records[index].code) }
            return records
        }
    }

    /// The last step of a withdrawal: deletes the profile and marks the withdrawal finished, both or
    /// neither. Repeating it changes nothing.
    public func finishWithdrawal(_ code: String, now: Double) throws {
        try lock.withLock {
            try database.transaction {
                let delete = try database.prepare("DELETE FROM testers WHERE code = ?")
                delete.bind(1, code)
                try delete.run()
                let finish = try database.prepare("UPDATE withdrawals SET finished = ? WHERE code = ? AND finished IS NULL")
                finish.bind([.real(now), .text(code)])
                try finish.run()
            }
            // The deleted pages are zeroed (secure_delete); the log's copy goes with the checkpoint.
            try database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    // MARK: Under the lock

    /// A code no tester, withdrawn tester or participant outside the pool ever had.
    private func freeCode() throws -> String {
        // Bounded: a code source that keeps repeating itself (or a pool grown near the codes' number) is an error, not a hang.
        for _ in 0..<1000 {
            let code = codes.next()
            if try load(code) == nil, try withdrawal(code) == nil, try !codeTakenElsewhere(code) { return code }
        }
        throw PoolError.noFreeCode
    }

    private func secretHash(_ code: String) throws -> String {
        let statement = try database.prepare("SELECT secret_sha256 FROM testers WHERE code = ?")
        defer { statement.reset() }
        statement.bind(1, code)
        return try statement.step() ? statement.string(0) ?? "" : ""
    }

    private func withdrawal(_ code: String) throws -> WithdrawalRecord? {
        let statement = try database.prepare("SELECT code, secret_sha256, delete_recordings, requested, finished FROM withdrawals WHERE code = ?")
        statement.bind(1, code)
        return try Self.withdrawals(from: statement).first
    }

    /// The withdrawals `statement` selects (code, secret_sha256, delete_recordings, requested, finished).
    private static func withdrawals(from statement: SQLiteStatement) throws -> [WithdrawalRecord] {
        var records: [WithdrawalRecord] = []
        try statement.forEachRow { row in
            records.append(WithdrawalRecord(code: row.string(0) ?? "", secretHash: row.string(1) ?? "", deleteRecordings: row.int64(2) != 0,
                                            requested: row.double(3), finished: row.isNull(4) ? nil : row.double(4)))
        }
        return records
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

    private func json<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ text: String?) -> T? {
        text.flatMap { try? JSONDecoder().decode(type, from: Data($0.utf8)) }
    }
}

/// A withdrawal as testers.sqlite records it: asked for at `requested`, carried out until `finished`.
public struct WithdrawalRecord: Sendable, Equatable {
    public var code: String
    /// The tester's secret's hash, kept after the profile is gone: their retry hears that it finished.
    var secretHash: String
    public var deleteRecordings: Bool
    public var requested: Double
    /// nil: pending.
    public var finished: Double?
    /// The profile while it is still there (until the withdrawal finishes).
    public var tester: Tester?

    init(code: String, secretHash: String, deleteRecordings: Bool, requested: Double, finished: Double? = nil) {
        self.code = code
        self.secretHash = secretHash
        self.deleteRecordings = deleteRecordings
        self.requested = requested
        self.finished = finished
    }
}

/// Where new tester codes come from: at random, or in a test a sequence of its own.
public struct TesterCodeSource: Sendable {
    let next: @Sendable () -> String

    public init(_ next: @escaping @Sendable () -> String) {
        self.next = next
    }

    /// `T` and five of `PoolCode.testerAlphabet`, at random (about 28.6 million codes).
    public static let random = TesterCodeSource { PoolCode.tester() }
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

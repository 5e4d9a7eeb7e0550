internal import Foundation

/// An analysis's result kept in the session file it was made from (table `analysis_digest`, docs/STORAGE.md),
/// so that it travels with the file: a study report reads it instead of analysing the session again.
/// What `digest` holds is its maker's business (StudyAnalysis: `StoredDigests`); this layer keeps the bytes and
/// what they were made from.
public struct StoredAnalysisDigest: Sendable, Equatable {
    /// What the digest is for (`study`): one row per kind.
    public var kind: String
    /// The digest's own format version and the analysis version (SessionAnalysis `AnalysisVersion`) it was made with.
    public var format: Int64
    public var analysis: Int64
    /// What it was made from, as its maker words it (the file's `SessionRevision`, the tasks, the options):
    /// a digest whose source differs from the present one is stale.
    public var source: String
    /// Seconds since 1970.
    public var made: Double
    public var digest: [UInt8]

    public init(kind: String, format: Int64, analysis: Int64, source: String, made: Double, digest: [UInt8]) {
        self.kind = kind
        self.format = format
        self.analysis = analysis
        self.source = source
        self.made = made
        self.digest = digest
    }
}

/// What of a session file an analysis reads and can change after the stop: its events (an observer's note
/// added later is one more) and its transcript (written after the stop, replaced whole by a new transcription).
public struct SessionRevision: Sendable, Equatable, Codable {
    public var events: Int64
    /// The largest event id.
    public var lastEvent: Int64
    public var transcriptSegments: Int64
    /// FNV-1a of every transcript row's columns: a transcript replaced by one of as many rows differs here.
    public var transcriptHash: UInt64

    public init(events: Int64, lastEvent: Int64, transcriptSegments: Int64, transcriptHash: UInt64) {
        self.events = events
        self.lastEvent = lastEvent
        self.transcriptSegments = transcriptSegments
        self.transcriptHash = transcriptHash
    }
}

enum AnalysisDigestSchema {
    static let table = """
        CREATE TABLE IF NOT EXISTS analysis_digest (
            kind TEXT PRIMARY KEY,
            format INTEGER NOT NULL,
            analysis INTEGER NOT NULL,
            source TEXT NOT NULL,
            made REAL NOT NULL,
            digest BLOB NOT NULL
        );
        """
}

extension SessionReader {
    /// The digest of `kind` stored in the file; nil when it has none (files made before digests have no such table).
    public func analysisDigest(kind: String) throws -> StoredAnalysisDigest? {
        guard try hasTable("analysis_digest") else { return nil }
        let statement = try database.prepare("SELECT format, analysis, source, made, digest FROM analysis_digest WHERE kind = ?")
        defer { statement.reset() }
        statement.bind(1, kind)
        guard try statement.step() else { return nil }
        return StoredAnalysisDigest(kind: kind, format: statement.int64(0), analysis: statement.int64(1), source: statement.string(2) ?? "",
                                    made: statement.double(3), digest: statement.bytes(4))
    }

    /// The file's events and transcript as they are now.
    public func revision() throws -> SessionRevision {
        let events = try database.prepare("SELECT COUNT(*), COALESCE(MAX(id), 0) FROM events")
        defer { events.reset() }
        _ = try events.step()
        var revision = SessionRevision(events: events.int64(0), lastEvent: events.int64(1), transcriptSegments: 0,
                                       transcriptHash: FNV1a.offsetBasis)
        guard try hasTable("transcripts") else { return revision }
        let transcript = try database.prepare("""
            SELECT device, stream, start, "end", text, confidence, exclamation FROM transcripts ORDER BY id
            """)
        var hash = FNV1a()
        try transcript.forEachRow { row in
            revision.transcriptSegments += 1
            for column in Int32(0)...6 {
                if row.isNull(column) {
                    hash.add([0])
                } else if [2, 3, 5].contains(column) {
                    // start, end, confidence: every bit, which their text would round.
                    hash.add(withUnsafeBytes(of: row.double(column).bitPattern.littleEndian, Array.init))
                } else {
                    hash.add(row.bytes(column))
                }
            }
        }
        revision.transcriptHash = hash.value
        return revision
    }
}

/// FNV-1a, 64 bits: cheap and stable across runs and machines (unlike `Hasher`), for telling content apart.
struct FNV1a {
    static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    private(set) var value = offsetBasis

    /// Each field with its length first, so that ("ab", "c") and ("a", "bc") differ.
    mutating func add(_ bytes: [UInt8]) {
        for byte in withUnsafeBytes(of: UInt64(truncatingIfNeeded: bytes.count).littleEndian, Array.init) + bytes {
            value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
    }
}

/// Writes digests into stopped sessions' files. A file takes it as it takes an observer's note after the
/// stop: in its own transaction, the WAL folded back into the file, so that the file alone stays complete.
public enum AnalysisDigestWriter {
    /// Replaces the file's digest of the same kind. The file must exist: a digest never creates one.
    public static func write(_ digest: StoredAnalysisDigest, toSessionFile path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            throw SQLiteError(code: 0, message: "no such session file", context: path)
        }
        let database = try SQLiteDatabase(path: path)
        try database.execute(AnalysisDigestSchema.table)
        let statement = try database.prepare("""
            INSERT OR REPLACE INTO analysis_digest (kind, format, analysis, source, made, digest) VALUES (?, ?, ?, ?, ?, ?)
            """)
        statement.bind([.text(digest.kind), .integer(digest.format), .integer(digest.analysis), .text(digest.source),
                        .real(digest.made), .blob(digest.digest)])
        try statement.run()
        try database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}

internal import Foundation
internal import JournalStorage
public import SessionAnalysis
public import SessionModel
internal import WireProtocol

/// Whether a study analysis may write the digests it makes into the session files (docs/STUDIES.md, "Digests").
/// Only muevald, which owns its data directory, writes them; `muevalctl` reads the ones stored and makes the
/// others in memory.
public enum DigestStorage: Sendable {
    case readOnly
    case readWrite
}

/// Session digests kept in the session files (table `analysis_digest`, kind `study`; docs/STUDIES.md, "Digests"):
/// made from the analysis the daemon runs at the stop anyway, or by the first study report that needs one, and
/// used as long as they are current: the same digest format, the same `AnalysisVersion`, and the same source (the
/// file's events and transcript, the study's tasks and the analysis options they were made from).
enum StoredDigests {
    static let kind = "study"
    /// Add one when what the digest holds, or how it is encoded, changes (2: a screenshot's page time).
    static let format: Int64 = 2

    /// The session's digest: the stored one when current, else made from a fresh analysis (and stored with `storage`).
    static func digest(of record: SessionRecord, tasks: [StudyTask], options: AnalysisOptions,
                       storage: DigestStorage) throws -> SessionDigest {
        // What the file is, read before the analysis: a note added meanwhile makes the stored digest stale, never wrong.
        let reader = try? SessionReader(path: record.path)
        let source = reader.flatMap { try? DigestSource(revision: $0.revision(), tasks: tasks, options: options).text }
        if let reader, let source, let stored = try? read(reader, record: record, source: source) { return stored }
        let digest = try SessionDigest(record, tasks: tasks, options: options)
        if storage == .readWrite, let source {
            // A digest is a cache: a file that cannot take it (read-only, a copy on a full disk) is analysed again next time.
            try? store(digest, source: source, path: record.path)
        }
        return digest
    }

    /// The stored digest when it is current; nil when there is none or it is stale.
    private static func read(_ reader: SessionReader, record: SessionRecord, source: String) throws -> SessionDigest? {
        guard let stored = try reader.analysisDigest(kind: kind), stored.format == format, stored.analysis == AnalysisVersion.current,
              stored.source == source else { return nil }
        let body = try decoder.decode(DigestBody.self, from: Data(stored.digest))
        return try body.digest(record, file: try reader.studyContext()?.assignment)
    }

    static func store(_ digest: SessionDigest, source: String, path: String) throws {
        let bytes = try encoder.encode(DigestBody(digest))
        try AnalysisDigestWriter.write(StoredAnalysisDigest(kind: kind, format: format, analysis: AnalysisVersion.current, source: source,
                                                            made: Date().timeIntervalSince1970, digest: Array(bytes)),
                                       toSessionFile: path)
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return decoder
    }
}

/// The digest of a session made from the analysis the daemon's automatic report runs at the stop, so that the
/// session is not analysed again for its study (docs/STUDIES.md, "Digests").
public struct StudyDigestMaker: Sendable {
    /// The `kind` of its row in the file's `analysis_digest` table.
    public static let kind = StoredDigests.kind

    private let tasks: [StudyTask]
    private let source: String

    /// Reads what the session file is, before its analysis; nil for a session outside any study (its file has no
    /// study context) and for a file that cannot be read (the analysis will say why).
    public init?(sessionFile path: String, options: AnalysisOptions) {
        guard let reader = try? SessionReader(path: path), let context = try? reader.studyContext(),
              let source = try? DigestSource(revision: reader.revision(), tasks: context.tasks, options: options).text else { return nil }
        tasks = context.tasks
        self.source = source
    }

    /// Makes the digest from `analysis` (of the file given at init, with the options given there) and stores it in the file.
    public func store(from analysis: AnalyzedSession, record: SessionRecord, options: AnalysisOptions) throws {
        try StoredDigests.store(try SessionDigest(analysis, record: record, tasks: tasks, options: options), source: source,
                                path: record.path)
    }
}

/// What a digest was made from: a stored digest whose source is not the present one is stale. The task fields
/// are those the digest's measures read (not the instructions).
struct DigestSource: Encodable {
    struct Task: Encodable {
        var name: String
        var timeLimit: Double?
        var success: TaskSuccess
        var expectedPath: [String]
    }

    var revision: SessionRevision
    var tasks: [Task]
    var options: AnalysisOptions

    init(revision: SessionRevision, tasks: [StudyTask], options: AnalysisOptions) {
        self.revision = revision
        self.tasks = tasks.map { Task(name: $0.name, timeLimit: $0.timeLimit, success: $0.success, expectedPath: $0.expectedPath) }
        self.options = options
    }

    /// Sorted keys: the same source is the same text.
    var text: String {
        get throws {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
            return String(decoding: try encoder.encode(self), as: UTF8.self)
        }
    }
}

/// A `SessionDigest` as stored: the catalog's side of the session (id, name, path, iteration and participant)
/// is left out and joined again when read, so that a copied or renamed file keeps its digest.
private struct DigestBody: Codable {
    struct Problem: Codable {
        var kind: String
        var view: String?
        var element: String?
        var time: Double
        var occurrences: Int
        var frame: Rect?
        var point: XY?
        var evidence: String
        var recommendation: String
        var screenshot: Shot?
    }

    struct Touches: Codable {
        var view: String
        var screenshot: Shot?
        /// x, y of each point as little-endian doubles: a one-hour session has tens of thousands.
        var points: Data
    }

    struct Note: Codable {
        var time: Double
        /// The note's stored payload (typed JSON), read back as the analysis reads it.
        var payload: String
    }

    struct Shot: Codable {
        var sha256: String
        var screen: XY?
        var page: Double?
    }

    struct XY: Codable {
        var x: Double
        var y: Double
    }

    var start: Double
    var duration: Double
    var events: Int64
    var firstRuns: [String: RunMeasure]
    var runCounts: [String: Int]
    var spans: [TaskSpan]
    var problems: [Problem]
    var touches: [Touches]
    var notes: [Note]
    var quotes: [TranscriptSegment]

    init(_ digest: SessionDigest) {
        start = digest.session.start
        duration = digest.session.duration
        events = digest.session.events
        firstRuns = digest.firstRuns
        runCounts = digest.runCounts
        spans = digest.spans
        problems = digest.problems.map { problem in
            Problem(kind: problem.kind.rawValue, view: problem.view, element: problem.element, time: problem.time,
                    occurrences: problem.occurrences, frame: problem.frame, point: problem.point.map { XY(x: $0.x, y: $0.y) },
                    evidence: problem.evidence, recommendation: problem.recommendation, screenshot: problem.screenshot.map(Shot.init))
        }
        touches = digest.touches.map { touches in
            var data = Data(capacity: touches.points.count * 16)
            for point in touches.points {
                withUnsafeBytes(of: point.x.bitPattern.littleEndian) { data.append(contentsOf: $0) }
                withUnsafeBytes(of: point.y.bitPattern.littleEndian) { data.append(contentsOf: $0) }
            }
            return Touches(view: touches.view, screenshot: touches.screenshot.map(Shot.init), points: data)
        }
        notes = digest.notes.map { Note(time: $0.time, payload: String(decoding: TypedJSON.encode($0.note.payload).json, as: UTF8.self)) }
        quotes = digest.quotes
    }

    /// The digest of the session `record` names, its screenshots read from `record.path`.
    func digest(_ record: SessionRecord, file: StudyAssignment?) throws -> SessionDigest {
        let reference = { (shot: Shot?) in
            shot.map { ScreenshotReference(sessionPath: record.path, sha256: $0.sha256, screen: $0.screen.map { Size(width: $0.x, height: $0.y) },
                                           pageTime: $0.page) }
        }
        return SessionDigest(
            session: try SessionDigest.placed(record, file: file, start: start, duration: duration, events: events),
            firstRuns: firstRuns, runCounts: runCounts, spans: spans,
            problems: try problems.map { problem in
                guard let kind = UsabilityProblem.Kind(rawValue: problem.kind) else { throw DigestBodyError.unknownProblemKind(problem.kind) }
                return SessionProblem(kind: kind, view: problem.view, element: problem.element, time: problem.time,
                                      occurrences: problem.occurrences, frame: problem.frame, point: problem.point.map { Point(x: $0.x, y: $0.y) },
                                      evidence: problem.evidence, recommendation: problem.recommendation,
                                      screenshot: reference(problem.screenshot))
            },
            touches: try touches.map { touches in
                guard touches.points.count % 16 == 0 else { throw DigestBodyError.pointsCutShort(view: touches.view) }
                let bits = touches.points.withUnsafeBytes { raw in
                    (0..<raw.count / 8).map { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self)) }
                }
                // Bit patterns from a file: a NaN or 1e300 the analysis never wrote means the digest is not its own.
                let points = try stride(from: 0, to: bits.count, by: 2).map { index in
                    guard let point = Point(at: Double(bitPattern: bits[index]), Double(bitPattern: bits[index + 1])) else {
                        throw DigestBodyError.absurdPoint(view: touches.view)
                    }
                    return point
                }
                return ViewTouches(view: touches.view, screenshot: reference(touches.screenshot), points: points)
            },
            notes: try notes.map { note in
                guard let read = ObserverNote(payload: try TypedJSON.decodeLeavingBlobs(Array(note.payload.utf8))) else {
                    throw DigestBodyError.unreadableNote
                }
                return (note.time, read)
            },
            quotes: quotes)
    }
}

extension DigestBody.Shot {
    init(_ reference: ScreenshotReference) {
        self.init(sha256: reference.sha256, screen: reference.screen.map { DigestBody.XY(x: $0.width, y: $0.height) }, page: reference.pageTime)
    }
}

/// A stored digest this version cannot read: it is made again.
private enum DigestBodyError: Error {
    case unknownProblemKind(String)
    case pointsCutShort(view: String)
    case absurdPoint(view: String)
    case unreadableNote
}

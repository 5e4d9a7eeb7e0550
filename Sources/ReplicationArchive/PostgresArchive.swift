internal import Foundation
internal import JournalStorage
internal import Logging
internal import MuEvalWire
internal import NIOCore
internal import PostgresNIO
public import SessionModel
internal import WireProtocol

/// One session as the shared database lists it: which lab recorded it, and its catalog row there.
public struct SharedSession: Codable, Sendable, Equatable {
    public var lab: String
    public var uuid: String
    /// The session's id in its lab's catalog.
    public var id: Int64
    public var name: String
    public var testUser: String?
    public var device: String?
    public var state: String
    public var created: Double
    public var started: Double?
    public var stopped: Double?
    public var events: Int64
    public var study: String?
    public var iteration: Int?
    public var participant: String?
    /// Events of the session in the shared database (less than `events` while replication catches up).
    public var replicated: Int64
}

/// Reads what labs replicated into the shared PostgreSQL (docs/POSTGRES.md): the sessions of every
/// lab, and one session back into a session file, so that everything that reads session files
/// (reports, export, the analysis) reads the shared database the same way.
public final class PostgresArchive: Sendable {
    private let connection: PostgresConnection
    /// Queries log nothing: what fails is thrown to muevalctl, which says it on one line.
    private let logger = Logger(label: "muevalctl.postgres") { _ in SwiftLogNoOpLogHandler() }
    public let target: String

    private init(connection: PostgresConnection, target: String) {
        self.connection = connection
        self.target = target
    }

    /// Connects to `url` (`postgres://USER@HOST[:PORT]/DATABASE`, the password in the URL or `passwordFile`).
    public static func open(url: String, passwordFile: String? = nil) async throws -> PostgresArchive {
        let target = try PostgresTarget(url: url, passwordFile: passwordFile)
        do {
            let archive = PostgresArchive(connection: try await target.connect(timeout: 10), target: target.description)
            try await archive.checkSchema()
            return archive
        } catch let error as ReplicationError {
            throw error
        } catch {
            throw ReplicationError.unreachable(target: target.description, reason: ReplicationError.reason(for: error))
        }
    }

    public func close() async {
        try? await connection.close()
    }

    private func checkSchema() async throws {
        var version = 0
        let rows = try await connection.query("""
            SELECT COALESCE((SELECT MAX(version) FROM mueval_schema), 0) WHERE to_regclass('mueval_schema') IS NOT NULL
            """, logger: logger)
        for try await found in rows.decode(Int.self) { version = found }
        guard version > 0 else { throw ReplicationError.noSchema(target: target) }
        guard version <= PostgresSchema.current else { throw ReplicationError.newerSchema(found: version, known: PostgresSchema.current) }
    }

    /// Every lab's sessions, by lab and then local id.
    public func sessions() async throws -> [SharedSession] {
        let rows = try await connection.query("""
            SELECT s.lab, s.uuid::text, s.local_id, s.name, s.test_user, s.device, s.state, s.created, s.started, s.stopped, s.events,
                   s.study, s.iteration, s.participant, COALESCE(r.last_event, 0)
            FROM sessions s LEFT JOIN replication r ON r.session = s.uuid
            ORDER BY s.lab, s.local_id
            """, logger: logger)
        var sessions: [SharedSession] = []
        for try await row in rows {
            let (lab, uuid, id, name, testUser, device, state, created) =
                try row.decode((String, String, Int64, String, String?, String?, String, Double).self)
            let columns = row.makeRandomAccess()
            sessions.append(SharedSession(
                lab: lab, uuid: uuid, id: id, name: name, testUser: testUser, device: device, state: state, created: created,
                started: try columns[8].decode(Double?.self), stopped: try columns[9].decode(Double?.self),
                events: try columns[10].decode(Int64.self), study: try columns[11].decode(String?.self),
                iteration: try columns[12].decode(Int?.self), participant: try columns[13].decode(String?.self),
                replicated: try columns[14].decode(Int64.self)))
        }
        return sessions
    }

    /// The session `selector` names: its uuid, `LAB:ID`, `LAB:NAME`, or a name only one lab has.
    public func session(_ selector: String) async throws -> SharedSession {
        let sessions = try await sessions()
        if let session = sessions.first(where: { $0.uuid == selector.lowercased() }) { return session }
        let matches: [SharedSession]
        if let colon = selector.lastIndex(of: ":") {
            let lab = String(selector[..<colon]), rest = String(selector[selector.index(after: colon)...])
            matches = sessions.filter { $0.lab == lab && (String($0.id) == rest || $0.name == rest) }
        } else {
            matches = sessions.filter { $0.name == selector }
        }
        guard matches.count == 1 else {
            throw ReplicationError.noSuchSession(selector: selector, candidates: matches.map { "\($0.lab):\($0.id)" })
        }
        return matches[0]
    }

    /// Study `name` as every lab that runs it has it: the definition of the first lab (by name) with
    /// the participants of all, every lab's questionnaire answers, and the sessions assigned to it in
    /// any lab. Nil when no lab has the study.
    public func study(_ name: String) async throws -> (study: Study, responses: StudyResponses, sessions: [SharedSession])? {
        let rows = try await connection.query("SELECT study::text, responses::text FROM studies WHERE name = \(name) ORDER BY lab", logger: logger)
        let decoder = JSONDecoder()
        var merged: Study?
        var responses = StudyResponses()
        for try await (study, answers) in rows.decode((String, String).self) {
            let study = try decoder.decode(Study.self, from: Data(study.utf8))
            let answers = try decoder.decode(StudyResponses.self, from: Data(answers.utf8))
            if merged == nil {
                merged = study
            } else {
                let known = Set(merged!.participants.map(\.code))
                merged!.participants += study.participants.filter { !known.contains($0.code) }
            }
            responses.sus += answers.sus
            responses.seq += answers.seq
            responses.answers += answers.answers
        }
        guard let merged else { return nil }
        return (merged, responses, try await sessions().filter { $0.study == name })
    }

    /// Writes `session` as a session file at `path` (which must not exist), as its lab has it.
    public func restore(_ session: SharedSession, to path: String) async throws {
        let uuid = UUID(uuidString: session.uuid)!
        let file = try SessionFile(path: path, synchronous: .normal)
        try await restoreDetails(uuid, path: path, into: file)
        var after: Int64 = -1
        while true {
            let rows = try await connection.query("""
                SELECT id, device, seq, class, "timestamp", timestamp_estimated, received, document
                FROM events WHERE session = \(uuid) AND id > \(after) ORDER BY id LIMIT 5000
                """, logger: logger)
            var events: [StoredEvent] = []
            for try await (id, device, seq, eventClass, timestamp, estimated, received, payload) in
                rows.decode((Int64, String, Int64?, String, Double, Bool, Double, String).self) {
                events.append(StoredEvent(id: id, device: device, seq: seq, eventClass: eventClass, timestamp: timestamp,
                                          timestampEstimated: estimated, received: received, payload: payload))
            }
            guard let last = events.last else { break }
            try file.restore(events: events)
            try await restoreBlobs(named: events, into: file)
            after = last.id
        }
        var afterMedia: Int64 = -1
        while true {
            let rows = try await connection.query("""
                SELECT id, device, seq, stream, kind, content_type, part, start, duration, received, bytes
                FROM media WHERE session = \(uuid) AND id > \(afterMedia) ORDER BY id LIMIT 64
                """, logger: logger)
            var media: [(id: Int64, chunk: StoredMediaChunk)] = []
            for try await row in rows {
                let (id, device, seq, stream, kind, contentType, part, start) =
                    try row.decode((Int64, String, Int64?, String, String, String, Int64, Double).self)
                let columns = row.makeRandomAccess()
                var bytes = try columns[10].decode(ByteBuffer.self)
                media.append((id, StoredMediaChunk(
                    device: device, seq: seq, stream: stream, kind: kind, contentType: contentType, part: part, start: start,
                    duration: try columns[8].decode(Double?.self), received: try columns[9].decode(Double.self),
                    bytes: bytes.readBytes(length: bytes.readableBytes) ?? [])))
            }
            guard let last = media.last else { break }
            try file.restore(media: media)
            afterMedia = last.id
        }
        try file.finish(buildingIndexes: true)
    }

    /// The session row, devices, gaps, study, imports and transcript.
    private func restoreDetails(_ uuid: UUID, path: String, into file: SessionFile) async throws {
        let decoder = JSONDecoder()
        let rows = try await connection.query("""
            SELECT local_id, name, test_user, notes, sensors::text, bound_device, device, state, created, started, stopped, events,
                   filtered, duplicates, study, iteration, participant, study_context::text, imports::text, transcription::text
            FROM sessions WHERE uuid = \(uuid)
            """, logger: logger)
        for try await row in rows {
            let c = row.makeRandomAccess()
            var record = SessionRecord(
                id: try c[0].decode(Int64.self), uuid: uuid.uuidString.lowercased(), name: try c[1].decode(String.self),
                testUser: try c[2].decode(String?.self), notes: try c[3].decode(String?.self),
                sensors: try decoder.decode([String].self, from: Data(try c[4].decode(String.self).utf8)),
                boundDevice: try c[5].decode(String?.self), device: try c[6].decode(String?.self),
                state: SessionState(rawValue: try c[7].decode(String.self)) ?? .stopped, created: try c[8].decode(Double.self),
                started: try c[9].decode(Double?.self), stopped: try c[10].decode(Double?.self), path: path,
                events: try c[11].decode(Int64.self), filtered: try c[12].decode(Int64.self), duplicates: try c[13].decode(Int64.self))
            record.study = try c[14].decode(String?.self)
            record.iteration = try c[15].decode(Int?.self)
            record.participant = try c[16].decode(String?.self)
            try file.writeMetadata(record)
            if let study = try c[17].decode(String?.self) {
                try file.writeStudyContext(try decoder.decode(StudyContext.self, from: Data(study.utf8)))
            }
            for source in try decoder.decode([SessionImportRecord].self, from: Data(try c[18].decode(String.self).utf8)) {
                try file.recordImport(source)
            }
            for status in try decoder.decode([TranscriptionStatus].self, from: Data(try c[19].decode(String.self).utf8)) {
                try file.writeTranscriptionStatus(status)
            }
        }
        let devices = try await connection.query("""
            SELECT device, name, model, system_version, app_id, app_version, screen_width, screen_height, screen_scale, first_seen, last_seen
            FROM devices WHERE session = \(uuid) ORDER BY device
            """, logger: logger)
        for try await row in devices {
            let c = row.makeRandomAccess()
            let device = DeviceDescription(
                name: try c[1].decode(String?.self), model: try c[2].decode(String?.self),
                systemVersion: try c[3].decode(String?.self), appId: try c[4].decode(String?.self), appVersion: try c[5].decode(String?.self),
                screenWidth: try c[6].decode(Double?.self), screenHeight: try c[7].decode(Double?.self), screenScale: try c[8].decode(Double?.self))
            try file.writeDevice(DeviceRecord(id: try c[0].decode(String.self), device: device,
                                              firstSeen: try c[9].decode(Double.self), lastSeen: try c[10].decode(Double.self)))
        }
        let gaps = try await connection.query("""
            SELECT start, "end", reason FROM gaps WHERE session = \(uuid) ORDER BY start
            """, logger: logger)
        for try await (start, end, reason) in gaps.decode((Double, Double?, String).self) {
            try file.addGap(SessionGap(start: start, end: end, reason: reason))
        }
        let transcript = try await connection.query("""
            SELECT device, stream, start, "end", text, confidence, exclamation FROM transcripts WHERE session = \(uuid) ORDER BY device, stream, start
            """, logger: logger)
        var streams: [String: [TranscriptSegment]] = [:]
        var order: [(device: String, stream: String)] = []
        for try await (device, stream, start, end, text, confidence, exclamation) in
            transcript.decode((String, String, Double, Double, String, Double?, String?).self) {
            let key = device + "\u{0}" + stream
            if streams[key] == nil { order.append((device, stream)) }
            streams[key, default: []].append(TranscriptSegment(device: device, stream: stream, start: start, end: end, text: text,
                                                               confidence: confidence, exclamation: exclamation))
        }
        for (device, stream) in order {
            try file.writeTranscript(device: device, stream: stream, segments: streams[device + "\u{0}" + stream]!)
        }
    }

    /// The blobs `events` name, from the shared table. Names are SHA-256s (`blobReferences` leaves out
    /// any other), and only bytes that hash to their name come back: a row written under a wrong name
    /// is left out, like a blob the table lacks.
    private func restoreBlobs(named events: [StoredEvent], into file: SessionFile) async throws {
        var names = Set<String>()
        for event in events {
            Array(event.payload.utf8).withUnsafeBufferPointer { names.formUnion(TypedJSON.blobReferences(in: $0)) }
        }
        guard !names.isEmpty else { return }
        let rows = try await connection.query("""
            SELECT sha256, bytes FROM blobs WHERE sha256 = ANY(\(Array(names))) AND encode(sha256(bytes), 'hex') = sha256
            """, logger: logger)
        for try await (sha256, buffer) in rows.decode((String, ByteBuffer).self) {
            var buffer = buffer
            try file.storeBlob(sha256: sha256, bytes: buffer.readBytes(length: buffer.readableBytes) ?? [])
        }
    }
}

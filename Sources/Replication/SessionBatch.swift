internal import Foundation
internal import JournalStorage
internal import SessionModel
internal import WireProtocol

/// How far PostgreSQL has a session: its last event and media chunk, and the generation of the
/// local file they count in (an `import --into` renumbers a session's events: a new generation,
/// which PostgreSQL then receives again from the start).
struct ReplicationPosition: Sendable, Equatable {
    var event: Int64 = 0
    var media: Int64 = 0
    var generation = 0
}

/// What a session file holds besides its events, media and blobs: small, sent whole when it changes.
struct SessionDetails: Sendable, Equatable {
    var record: SessionRecord
    var devices: [DeviceRecord]
    var gaps: [SessionGap]
    var study: StudyContext?
    var imports: [SessionImportRecord]
    var transcript: [TranscriptSegment]
    var transcription: [TranscriptionStatus]
}

/// A session's next batch, read from its file on a thread of the pool, never on the async executor:
/// the events and media chunks after `position`, the blobs those events name that were not sent
/// yet, the session's details and its newest event id.
struct SessionBatch: Sendable {
    var events: [StoredEvent]
    var media: [(id: Int64, chunk: StoredMediaChunk)]
    var blobs: [(sha256: String, bytes: [UInt8])]
    var details: SessionDetails
    var newest: Int64
    var generation: Int

    /// Bytes of media per batch (besides `limit` events).
    static let mediaBytes = 8 << 20

    init(session: SessionRecord, after position: ReplicationPosition, limit: Int, knownBlobs: Set<String>) throws {
        let reader = try SessionReader(path: session.path)
        let imports = try reader.imports()
        generation = imports.count
        details = SessionDetails(record: session, devices: try reader.devices(), gaps: try reader.gaps(), study: try reader.studyContext(),
                                 imports: imports, transcript: try reader.transcript(), transcription: try reader.transcriptionStatus())
        newest = try reader.events(last: 1).last?.id ?? 0
        guard generation == position.generation else {
            // Renumbered since: nothing is sent until PostgreSQL has forgotten the old numbering.
            (events, media, blobs) = ([], [], [])
            return
        }
        events = try reader.page(afterID: position.event, limit: limit, maxBytes: Self.mediaBytes)
        media = try reader.mediaPage(afterID: position.media, limit: limit, maxBytes: Self.mediaBytes)
        var named: [String] = []
        for event in events {
            let references = Array(event.payload.utf8).withUnsafeBufferPointer { TypedJSON.blobReferences(in: $0) }
            for sha in references where !knownBlobs.contains(sha) && !named.contains(sha) { named.append(sha) }
        }
        blobs = try named.compactMap { sha in try reader.blob(sha256: sha).map { (sha, $0) } }
    }
}

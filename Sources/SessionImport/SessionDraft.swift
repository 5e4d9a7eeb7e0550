internal import Foundation
internal import JournalStorage
internal import MuEvalWire
internal import PageRecording
internal import SessionModel
internal import WireProtocol

/// The session file an import writes: a hidden file in the sessions folder until the whole source has
/// been read, then moved to its session's path in the catalog's transaction (`SessionImporter`). A
/// failed import deletes it: nothing of a bad file is ever visible. Records are stored in batches, so
/// a file of any size streams through in bounded memory.
final class SessionDraft {
    let path: String
    private let file: SessionFile
    private var batch: [JournalRecord] = []
    private var batchBytes = 0
    private var transcripts: [String: [TranscriptSegment]] = [:]
    private let maxEvents: Int64
    private var finished = false
    /// Events stored (a duplicate (device, seq) is not).
    private(set) var events: Int64 = 0
    private(set) var mediaChunks = 0
    private(set) var firstTimestamp: Double?
    private(set) var lastTimestamp: Double?

    private static let batchRecords = 2000
    private static let batchBytesLimit = 8 << 20

    /// A new, empty draft in `folder`.
    init(folder: String, maxEvents: Int64) throws {
        path = "\(folder)/.import-\(UUID().uuidString.lowercased()).sqlite"
        self.maxEvents = maxEvents
        file = try SessionFile(path: path, synchronous: .normal)
    }

    /// A draft that starts as a copy of `session`'s file (`import --into`).
    init(copying session: SessionRecord, folder: String, maxEvents: Int64) throws {
        path = "\(folder)/.import-\(UUID().uuidString.lowercased()).sqlite"
        self.maxEvents = maxEvents
        try SessionReader(path: session.path).copy(to: path)
        file = try SessionFile(path: path, synchronous: .normal, indexed: true)
    }



    func add(_ event: WireEvent, device: String, received: Double) throws {
        guard events < maxEvents else { throw DraftLimit.tooManyEvents }
        let timestamp = event.timestamp ?? received
        if firstTimestamp == nil { firstTimestamp = timestamp }
        firstTimestamp = min(firstTimestamp!, timestamp)
        lastTimestamp = max(lastTimestamp ?? timestamp, timestamp)
        // An imported page record is sanitised as a device's is (docs/SECURITY.md, "Page recordings").
        append(JournalRecord(device: device, received: received, event: PageRecordEvent.stored(event), origin: 0))
        events += 1
    }

    func add(_ media: WireMedia, device: String, received: Double) throws {
        mediaChunks += 1
        append(JournalRecord(device: device, received: received, content: .media(media), origin: 0))
        if batchBytes >= Self.batchBytesLimit { try flush() }
    }

    /// Gives events stored under `placeholder` their device, once the file has named it.
    func renameDevice(_ placeholder: String, to device: String) throws {
        try flush()
        try file.renameDevice(placeholder, to: device)
    }

    func addBlob(sha256: String, bytes: [UInt8]) throws { try file.storeBlob(sha256: sha256, bytes: bytes) }
    func addGap(_ gap: SessionGap) throws { try file.addGap(gap) }
    func addDevice(_ device: DeviceRecord) throws { try file.writeDevice(device) }
    func addStudyContext(_ context: StudyContext) throws { try file.writeStudyContext(context) }

    func addSpeech(_ segment: TranscriptSegment) {
        transcripts[segment.device + "\u{0}" + segment.stream, default: []].append(segment)
    }

    private func append(_ record: JournalRecord) {
        batch.append(record)
        batchBytes += record.footprint
    }

    /// Stores what is batched once the batch is full.
    func flushIfFull() throws {
        if batch.count >= Self.batchRecords || batchBytes >= Self.batchBytesLimit { try flush() }
    }

    func flush() throws {
        guard !batch.isEmpty else { return }
        _ = try file.store([batch])
        batch.removeAll(keepingCapacity: true)
        batchBytes = 0
    }

    /// Stores the rest, numbers the events by time when asked (a merge) and builds the indexes: the slow
    /// part of finishing, done before the catalog is involved.
    func complete(renumber: Bool, now: Double) throws {
        try flush()
        for (_, segments) in transcripts {
            guard let first = segments.first else { continue }
            try file.writeTranscript(device: first.device, stream: first.stream, segments: segments)
            // What the file brought is the transcript: the daemon does not transcribe the stream again.
            try file.writeTranscriptionStatus(TranscriptionStatus(device: first.device, stream: first.stream, state: .done,
                                                                  progress: 1, engine: "imported", updated: now))
        }
        if renumber { try file.renumberEventsByTime() }
        try file.finish(buildingIndexes: true)
    }

    /// Writes the session's own row and its source, and folds the WAL in: the file is final.
    func seal(_ session: SessionRecord, source: SessionImportRecord) throws {
        try file.writeMetadata(session)
        try file.recordImport(source)
        try file.finish(buildingIndexes: false)
        finished = true
    }

    /// Puts the finished file at `destination`, replacing what is there.
    func move(to destination: String) throws {
        precondition(finished, "a draft moves once finished")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        guard rename(path, destination) == 0 else {
            throw ImportError(file: destination, "cannot be written: \(String(cString: strerror(errno)))")
        }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: destination + suffix) }
    }

    /// Deletes the draft (a failed import).
    func discard() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

/// A draft that reached import.max-events; the reader says where in its file.
enum DraftLimit: Error {
    case tooManyEvents
}

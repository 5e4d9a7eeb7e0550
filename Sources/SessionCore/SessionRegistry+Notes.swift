internal import Foundation
internal import GroupCommit
internal import JournalStorage
public import SessionModel
public import WireProtocol

/// Observers' notes and task marks: into an open session's journal, in order with its events, or
/// appended to a stopped session's file.
extension SessionRegistry {
    /// Stores an observer's note (docs/STORAGE.md, `ObserverNote`) in the session `key` names (id
    /// or name). An open session takes it through its journal, in order with its events, and the
    /// live tail shows it as it shows theirs; a stopped one (a note taken during replay) gets it
    /// appended to its file. It is put at `deviceTime` when given (a replay's position), else at
    /// `now` on the device's clock (see `EvaluationSession.noteTimestamp`).
    public func addNote(_ key: String, text: String, kind: String = ObserverNote.defaultKind, source: String,
                        observer: String? = nil, at deviceTime: Double? = nil, now: Double) async throws -> StoredEvent {
        guard let source = ObserverNote.Source(rawValue: source) else { throw ObserverNoteError.unknownSource(source) }
        return try await add(try ObserverNote(text: text, kind: kind, source: source, observer: observer), to: key, at: deviceTime, now: now)
    }

    /// Stores an observer's note or task mark (checked by `ObserverNote`'s initialisers) in the session `key`.
    public func add(_ note: ObserverNote, to key: String, at deviceTime: Double? = nil, now: Double) async throws -> StoredEvent {
        if let deviceTime, !deviceTime.isFinite { throw ObserverNoteError.badTime(deviceTime) }
        let record = try find(key)
        if let session = lock.withLock({ live[record.id] }) {
            return try await addNote(note, to: session, at: deviceTime, now: now)
        }
        guard record.state == .stopped else { throw SessionError.stopping(record.id) }
        return try await withCheckedThrowingContinuation { continuation in
            catalogQueue.async { [self] in
                continuation.resume(with: Result { try appendNote(note, toStopped: record.id, at: deviceTime, now: now) })
            }
        }
    }

    /// Through the session's journal: the commit report that acknowledges device events publishes it to the tail.
    private func addNote(_ note: ObserverNote, to session: EvaluationSession, at deviceTime: Double?, now: Double) async throws -> StoredEvent {
        let record = Self.journalRecord(note, in: session.snapshot, at: deviceTime, now: now, offset: session.clockOffset)
        let rowIDs = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[Int64?], Error>) in
            let admission = session.journal.append([record]) { continuation.resume(with: $0) }
            if admission == .closed { continuation.resume(throwing: SessionError.stopping(session.id)) }
        }
        // Every note gets a row: it has no seq, so it is never taken for a duplicate.
        guard let id = rowIDs.first ?? nil, let stored = record.stored(as: id) else { throw SessionError.stopping(session.id) }
        return stored
    }

    /// On the catalog queue, so that a stopped file has one writer at a time and the catalog's count follows it.
    private func appendNote(_ note: ObserverNote, toStopped id: Int64, at deviceTime: Double?, now: Double) throws -> StoredEvent {
        guard var session = try catalog.session(id: id), FileManager.default.fileExists(atPath: session.path) else {
            throw SessionError.notFound(String(id))
        }
        let offset = deviceTime == nil ? try SessionReader(path: session.path).clockOffset() : nil
        let record = Self.journalRecord(note, in: session, at: deviceTime, now: now, offset: offset)
        let file = try SessionFile(path: session.path, synchronous: journalLimits.synchronous, indexed: true)
        guard let rowID = try file.store([[record]]).first ?? nil, let stored = record.stored(as: rowID) else {
            throw SessionError.notFound(String(id))
        }
        // Folded into the file, which stays complete on its own as a stopped session's file is.
        try file.finish(buildingIndexes: false)
        session.events += 1
        try catalog.update(session)
        tail.publish(.event(stored, session: id))
        logger.info("session \(id): \(note.source) added a note after the stop")
        return stored
    }

    /// The note as a row of the session: on its device's line (or `ObserverNote.device` before one connected).
    private static func journalRecord(_ note: ObserverNote, in session: SessionRecord, at deviceTime: Double?, now: Double,
                                      offset: Double?) -> JournalRecord {
        JournalRecord(device: session.device ?? session.boundDevice ?? ObserverNote.device, received: now,
                      event: note.event(timestamp: EvaluationSession.noteTimestamp(at: deviceTime, now: now, offset: offset)),
                      origin: EvaluationSession.observerOrigin)
    }
}

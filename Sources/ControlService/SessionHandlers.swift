internal import ControlProtocol
internal import SessionCore
internal import SessionModel
internal import WireProtocol

/// The commands on sessions and devices: start, stop, list, delete, note, transcribe.
struct SessionHandlers: Sendable {
    let registry: SessionRegistry
    let transcription: (any TranscriptionQueue)?

    func start(_ start: ControlRequest.StartSession, now: Double) async throws -> SessionRecord {
        try await registry.start(name: start.name, testUser: start.user, notes: start.notes, sensors: start.sensors,
                                 device: start.device, pairing: start.pairing, study: start.assignment, now: now)
    }

    func stop(_ stop: ControlRequest.StopSessions, now: Double) async throws -> [SessionRecord] {
        switch stop.sessions {
        case .all: try await registry.stopAll(now: now)
        case .session(let key): [try await registry.stop(key, now: now)]
        }
    }

    func list() throws -> [SessionRecord] {
        try registry.sessions()
    }

    func devices() throws -> [DeviceRecord] {
        try registry.devices()
    }

    func delete(_ delete: ControlRequest.DeleteSession) throws -> SessionRecord {
        try registry.delete(delete.session)
    }

    /// Stored with `observer`, the user name of the process that asked.
    func note(_ note: ControlRequest.AddNote, observer: String?, now: Double) async throws -> StoredEvent {
        try await registry.addNote(note.session, text: note.text, kind: note.kind ?? ObserverNote.defaultKind,
                                   source: ObserverNote.Source.muevalctl.rawValue, observer: observer, now: now)
    }

    func transcribe(_ transcribe: ControlRequest.Transcribe, now: Double) throws -> [SessionTranscription] {
        let record = try registry.find(transcribe.session)
        guard record.state == .stopped else {
            throw ControlUsageError("session \(record.id) still records: its audio is transcribed when it stops")
        }
        guard let transcription else { throw ControlUsageError("this muevald does not transcribe") }
        return try transcription.enqueue(record, now: now)
    }
}

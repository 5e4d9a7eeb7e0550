internal import Foundation
public import JournalStorage
internal import MuEvalWire
public import SessionModel
internal import WireProtocol

/// Limits of `muevalctl import` (muevald's `[import]` section).
public struct ImportLimits: Sendable, Equatable {
    /// Files larger than this are refused before they are read.
    public var maxFileBytes: Int64
    /// Events one file may bring.
    public var maxEvents: Int64
    /// Seconds a log's time may go back from one record to the next before it is refused (IMUT, GPX).
    public var maxTimeRegression: Double

    public init(maxFileBytes: Int64 = 4 << 30, maxEvents: Int64 = 20_000_000, maxTimeRegression: Double = 1) {
        self.maxFileBytes = maxFileBytes
        self.maxEvents = maxEvents
        self.maxTimeRegression = maxTimeRegression
    }
}

/// What to import and how (the fields of `muevalctl import`).
public struct ImportRequest: Sendable {
    /// Logs, tracks and exports to import, each as its own session; and recordings an IMUT log names.
    /// Opened by whoever asks (muevalctl), never by the importer.
    public var files: [ImportFile]
    /// The format of every log; recognised from each file's content when nil.
    public var format: ImportFormat?
    public var name: String?
    public var testUser: String?
    public var assignment: StudyAssignment?
    /// The stopped session a track or log is merged into, instead of making a new one.
    public var into: SessionRecord?
    /// Import a file again that was imported before.
    public var again: Bool

    public init(files: [ImportFile], format: ImportFormat? = nil, name: String? = nil, testUser: String? = nil,
                assignment: StudyAssignment? = nil, into: SessionRecord? = nil, again: Bool = false) {
        self.files = files
        self.format = format
        self.name = name
        self.testUser = testUser
        self.assignment = assignment
        self.into = into
        self.again = again
    }
}

/// Imports files into a data directory (docs/IMPORT.md): each log becomes a stopped session, in one
/// transaction: read whole into a hidden draft file, which moves to its session's path in the same
/// catalog transaction that lists it. A file that fails leaves nothing behind. Blocking: run it off any
/// event loop.
public struct SessionImporter: Sendable {
    public let catalog: Catalog
    public let limits: ImportLimits
    /// This lab's name (`storage.postgres.lab`): an export of another lab gets a uuid of its own.
    public let lab: String

    public init(catalog: Catalog, limits: ImportLimits = .init(), lab: String) {
        self.catalog = catalog
        self.limits = limits
        self.lab = lab
    }

    private struct Source {
        var file: ImportFile
        var name: String { (file.name as NSString).lastPathComponent }
        var sha256: String
        var format: ImportFormat
    }

    public func run(_ request: ImportRequest, now: Double) throws -> [ImportOutcome] {
        guard !request.files.isEmpty else { throw ImportUsageError("import needs at least one file") }
        var logs: [Source] = []
        var recordings: [ImportFile] = []
        for file in request.files {
            let size = try FileChunks.size(of: file, limit: limits.maxFileBytes)
            let (sha256, head) = try FileChunks.fingerprint(of: file)
            switch (request.format, FormatRecognizer.recognise(head)) {
            case (_, .recording):
                recordings.append(file)
            case (let format?, _):
                logs.append(Source(file: file, sha256: sha256, format: format))
            case (nil, .log(let format)):
                logs.append(Source(file: file, sha256: sha256, format: format))
            case (nil, .unknown(let kind)):
                // The kind of content and its size only: the error goes back to the client, and the file may be a secret.
                throw ImportError(file: file.name, "is not a file muEval imports: its format is unknown (\(size) bytes: \(kind)); "
                                  + "muEval imports \(FormatRecognizer.accepted); give --format imut, gpx, jsonl or plist if it is one")
            }
        }
        guard !logs.isEmpty else { throw ImportUsageError("no log among the files: give the IMUT log with the recordings it names") }
        if !recordings.isEmpty, logs.count > 1 || logs[0].format != .imut {
            throw ImportUsageError("recordings are attached to the IMUT log that names them: give one IMUT log with its recordings")
        }
        if let into = request.into {
            guard logs.count == 1, [.gpx, .imut].contains(logs[0].format) else {
                throw ImportUsageError("--into merges one GPX track or IMUT log into a session; an export is a session of its own")
            }
            guard into.state == .stopped else { throw ImportUsageError("session \(into.id) still records: stop it before merging into it") }
        }
        if !request.again {
            for log in logs {
                if let session = try catalog.session(importedFrom: log.sha256) {
                    throw AlreadyImported(file: log.file.name, session: session)
                }
            }
        }
        var outcomes: [ImportOutcome] = []
        for log in logs {
            do {
                outcomes.append(try importLog(log, recordings: recordings, request, now: now))
            } catch let error where !outcomes.isEmpty {
                let made = outcomes.map { "session \($0.session.id) from \($0.file)" }.joined(separator: ", ")
                throw ImportUsageError("\(error) (imported before it: \(made))")
            }
        }
        return outcomes
    }

    private func importLog(_ log: Source, recordings: [ImportFile], _ request: ImportRequest, now: Double) throws -> ImportOutcome {
        let folder = catalog.directory + "/" + Catalog.sessionsFolder
        let draft = try request.into.map { try SessionDraft(copying: $0, folder: folder, maxEvents: limits.maxEvents) }
            ?? SessionDraft(folder: folder, maxEvents: limits.maxEvents)
        do {
            let context = ImportContext(file: log.file.name, limits: limits, device: request.into.map { $0.device ?? $0.boundDevice ?? "gpx" })
            var reader: any ImportReader = switch log.format {
            case .imut: IMUTLogReader(context: context)
            case .gpx: GPXReader(context: context)
            case .jsonl: JSONLinesExportReader(context: context)
            case .plist: PlistExportReader(context: context)
            }
            var chunks = FileChunks(log.file)
            let summary = try reader.read(&chunks, into: draft)
            let attached = try attach(recordings, named: summary.recordings, device: summary.device?.id ?? "imut", into: draft, now: now)
            if let assignment = request.assignment { try draft.addStudyContext(try catalog.studyContext(of: assignment)) }
            try draft.complete(renumber: request.into != nil, now: now)
            let source = SessionImportRecord(file: log.name, format: log.format, sha256: log.sha256, imported: now,
                                             events: draft.events, cutShort: summary.cutShort)
            let origin = try summary.exported.map { ExportOrigin(uuid: $0.uuid, lab: $0.lab, identity: try identity(of: $0)) }
            let session: SessionRecord
            if var into = request.into {
                into.events += draft.events
                session = try catalog.addImport(source, to: into) {
                    try draft.seal(into, source: source)
                    try draft.move(to: into.path)
                }
            } else {
                session = try catalog.addImportedSession(newSession(log, summary, origin, draft, request), source: source) { record in
                    try draft.seal(record, source: source)
                    try draft.move(to: record.path)
                }
            }
            return ImportOutcome(session: session, file: log.name, format: log.format, events: draft.events,
                                 mediaChunks: draft.mediaChunks, attached: attached, cutShort: summary.cutShort, origin: origin)
        } catch {
            draft.discard()
            throw error
        }
    }

    /// The session an imported file becomes: an export's own description, else what the file tells.
    private func newSession(_ log: Source, _ summary: ReadSummary, _ origin: ExportOrigin?, _ draft: SessionDraft,
                            _ request: ImportRequest) -> SessionRecord {
        let first = draft.firstTimestamp ?? summary.exported?.created ?? 0
        var record = SessionRecord(id: 0, uuid: UUID().uuidString.lowercased(),
                                   name: request.name ?? summary.name ?? ((log.name as NSString).deletingPathExtension),
                                   testUser: request.testUser ?? request.assignment?.participant, device: summary.device?.id,
                                   state: .stopped, created: first, started: first, stopped: draft.lastTimestamp ?? first,
                                   path: "", events: draft.events, assignment: request.assignment)
        if let exported = summary.exported {
            if origin?.identity == .kept { record.uuid = exported.uuid }
            record.name = request.name ?? exported.name
            record.testUser = request.testUser ?? exported.testUser
            record.notes = exported.notes
            record.sensors = exported.sensors
            record.boundDevice = exported.boundDevice
            record.device = exported.device
            record.created = exported.created
            record.started = exported.started
            record.stopped = exported.stopped ?? draft.lastTimestamp
            record.filtered = exported.filtered
            record.duplicates = exported.duplicates
        }
        return record
    }

    /// Whether an export's session keeps its uuid here. Only in the lab it came from (a deleted session
    /// restored, a lab machine replaced): in another lab it is that lab's copy, and the shared
    /// PostgreSQL, where a uuid is one lab's session, must keep the two apart (docs/POSTGRES.md).
    private func identity(of exported: ExportedSession) throws -> ExportOrigin.Identity {
        guard let from = exported.lab else { return .unknownLab }
        guard from == lab else { return .otherLab }
        return try catalog.sessions().contains { $0.uuid == exported.uuid } ? .taken : .kept
    }

    /// Stores each recording the log names as a media stream on the log's clock: the file's bytes in
    /// parts of 1 MiB, which concatenate to the file.
    private func attach(_ recordings: [ImportFile], named: [NamedRecording], device: String, into draft: SessionDraft, now: Double) throws -> [String] {
        var attached: [String] = []
        for file in recordings {
            let name = (file.name as NSString).lastPathComponent
            guard let recording = named.first(where: { ($0.file as NSString).lastPathComponent == name }) else {
                let names = named.map(\.file)
                throw ImportError(file: file.name, "is not a recording the log names" + (names.isEmpty ? " (it names none)" : " (it names \(names.joined(separator: ", ")))"))
            }
            var chunks = FileChunks(file)
            var part: Int64 = 0
            while case let bytes = try chunks.next(), !bytes.isEmpty {
                try draft.add(WireMedia(stream: recording.recorder, format: name.lowercased().hasSuffix(".wav") ? .wav : .h264MP4, part: part,
                                        start: recording.start, duration: part == 0 ? recording.duration : nil, seq: nil, bytes: bytes),
                              device: device, received: now)
                part += 1
            }
            attached.append(name)
        }
        return attached
    }
}

/// An import asked for in a way that cannot work, said so the user can fix the command.
public struct ImportUsageError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}

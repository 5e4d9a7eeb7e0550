public import ControlProtocol
public import CaptureServer
internal import DequeModule
internal import Foundation
internal import JournalStorage
internal import NIOConcurrencyHelpers
internal import NIOPosix
public import SessionImport
public import SessionModel
internal import WireProtocol

/// What the daemon says about itself in `status`.
public struct DaemonDescription: Sendable {
    public var pid: Int32
    public var started: Double
    public var socket: String
    public var dataDirectory: String
    public var unknownDevicePolicy: UnknownDevicePolicy

    public init(pid: Int32, started: Double, socket: String, dataDirectory: String, unknownDevicePolicy: UnknownDevicePolicy) {
        self.pid = pid
        self.started = started
        self.socket = socket
        self.dataDirectory = dataDirectory
        self.unknownDevicePolicy = unknownDevicePolicy
    }
}

/// Carries out control requests against the session registry.
public final class ControlCommands: Sendable {
    private let registry: SessionRegistry
    private let studies: Studies
    private let counters: CaptureCounters
    private let liveTail: LiveTail
    private let settings: CaptureSettings
    private let health: StorageHealth
    private let description: DaemonDescription
    private let importer: SessionImporter
    private let listen = NIOLockedValueBox<ListenAddress?>(nil)
    private let listenTLS = NIOLockedValueBox<ListenAddress?>(nil)
    private let zeroconfState = NIOLockedValueBox<@Sendable () -> String>({ "off" })
    private let consoleLink = NIOLockedValueBox<(@Sendable (Double) throws -> ConsoleLink)?>(nil)
    private let transcription = NIOLockedValueBox<Transcription?>(nil)
    private let replication = NIOLockedValueBox<(@Sendable () -> ReplicationStatus)?>(nil)

    /// How `status` and `transcribe` reach the daemon's transcription.
    private struct Transcription: Sendable {
        var progress: @Sendable (Double) -> [SessionTranscription]
        var enqueue: @Sendable (SessionRecord, Double) throws -> [SessionTranscription]
    }

    public init(registry: SessionRegistry, studies: Studies, counters: CaptureCounters, liveTail: LiveTail, settings: CaptureSettings,
                health: StorageHealth, description: DaemonDescription, importer: SessionImporter) {
        self.registry = registry
        self.importer = importer
        self.studies = studies
        self.counters = counters
        self.liveTail = liveTail
        self.settings = settings
        self.health = health
        self.description = description
    }

    /// The daemon stops: live tails say so and end.
    public func shutdown() {
        liveTail.closeAll(now: Date().timeIntervalSince1970)
    }

    /// Called once the capture server listens, so that `status` shows the real port: the first listener
    /// is `listen`; a TLS one beside a plaintext one is `listenTLS`.
    public func listening(on address: ListenAddress) {
        listen.withLockedValue { current in
            if current == nil { current = address } else { listenTLS.withLockedValue { $0 = address } }
        }
    }

    /// Where `status` reads the Zeroconf announcement's state from.
    public func reportZeroconf(_ state: @escaping @Sendable () -> String) {
        zeroconfState.withLockedValue { $0 = state }
    }

    /// Where `console` gets its login links; unset: the console is off.
    public func reportConsole(_ link: @escaping @Sendable (Double) throws -> ConsoleLink) {
        consoleLink.withLockedValue { $0 = link }
    }

    /// Where `status` reads how far replication into PostgreSQL is.
    public func reportReplication(_ current: @escaping @Sendable () -> ReplicationStatus) {
        replication.withLockedValue { $0 = current }
    }

    /// Where `status` reads what is being transcribed, and `transcribe` queues a session's audio.
    public func reportTranscription(progress: @escaping @Sendable (Double) -> [SessionTranscription],
                                    enqueue: @escaping @Sendable (SessionRecord, Double) throws -> [SessionTranscription]) {
        transcription.withLockedValue { $0 = Transcription(progress: progress, enqueue: enqueue) }
    }

    /// The daemon at a glance (`status`, and the console's Server page and /metrics).
    public func status() -> StatusReport {
        let transcriptions = transcription.withLockedValue { $0 }?.progress(Date().timeIntervalSince1970) ?? []
        return StatusReport(
            version: MuEvalVersion.current, pid: description.pid, started: description.started,
            listen: listen.withLockedValue { $0 }, listenTLS: listenTLS.withLockedValue { $0 }, zeroconf: zeroconfState.withLockedValue { $0 }(), socket: description.socket,
            dataDirectory: description.dataDirectory, unknownDevicePolicy: description.unknownDevicePolicy,
            sessions: registry.openSessions().map(\.snapshot), counters: counters.snapshot(),
            tails: liveTail.followers, storageProblem: health.problem, transcriptions: transcriptions,
            replication: replication.withLockedValue { $0 }?())
    }

    /// What the connection does after a request.
    public enum Continuation: Sendable {
        case readNextRequest
        /// Close it: the daemon is stopping and the client must learn so from the closed connection.
        case close
    }

    /// Carries out `request` for `peer`, the process at the other end (who takes a note), which passes
    /// open files through `files` (import).
    public func execute(_ request: ControlRequest, from peer: PeerCredentials? = nil, writer: ControlReplyWriter,
                        files: PassedFiles? = nil) async throws -> Continuation {
        do {
            return try await run(request, from: peer, writer: writer, files: files)
        } catch let error as ControlUsageError {
            try await writer.fail(error.description)
        } catch {
            try await writer.fail("\(error)")
        }
        return .readNextRequest
    }

    private func run(_ request: ControlRequest, from peer: PeerCredentials?, writer: ControlReplyWriter,
                     files: PassedFiles?) async throws -> Continuation {
        let now = Date().timeIntervalSince1970
        switch request.command {
        case .start:
            let record = try await registry.start(name: request.name, testUser: request.user, notes: request.notes,
                                                  sensors: request.sensors ?? [], device: request.device,
                                                  pairing: request.pairing == true, study: try assignment(request), now: now)
            try await writer.succeed(record)
        case .stop:
            if request.all == true {
                try await writer.succeed(try await registry.stopAll(now: now))
            } else {
                try await writer.succeed([try await registry.stop(try sessionKey(request), now: now)])
            }
        case .status:
            try await writer.succeed(status())
        case .sessions:
            try await writer.succeed(try registry.sessions())
        case .devices:
            try await writer.succeed(try registry.devices())
        case .events:
            let record = try registry.find(try sessionKey(request))
            let limit = request.limit ?? 100
            if let grep = request.grep, !grep.isEmpty {
                try await events(record, matching: grep, classes: request.classes ?? [], limit: limit, writer: writer)
            } else {
                let count = try await forEachPage(of: record, classes: request.classes ?? [], last: limit > 0 ? limit : nil) { page in
                    try await writer.events(page)
                }
                try await writer.succeed(EventsSummary(session: record.id, events: Int64(count)))
            }
        case .media:
            try await media(try registry.find(try sessionKey(request)), writer: writer)
        case .transcribe:
            let record = try registry.find(try sessionKey(request))
            guard record.state == .stopped else {
                throw ControlUsageError("session \(record.id) still records: its audio is transcribed when it stops")
            }
            guard let transcription = transcription.withLockedValue({ $0 }) else {
                throw ControlUsageError("this muevald does not transcribe")
            }
            try await writer.succeed(try transcription.enqueue(record, now))
        case .import:
            try await writer.succeed(try await importFiles(request, passedBy: files, now: now))
        case .export:
            let record = try registry.find(try sessionKey(request))
            let format = request.format ?? .plist
            try await export(record, format: format, classes: request.classes ?? [], writer: writer)
        case .delete:
            try await writer.succeed(try registry.delete(try sessionKey(request)))
        case .tail:
            return try await tail(request, writer: writer)
        case .note:
            try await writer.succeed(try await registry.addNote(
                try sessionKey(request), text: request.text ?? "", kind: request.kind ?? ObserverNote.defaultKind,
                source: ObserverNote.Source.muevalctl.rawValue, observer: peer?.userName, now: now))
        case .console:
            guard let link = consoleLink.withLockedValue({ $0 }) else {
                throw ControlUsageError("the web console is off: set console.enabled = true in muevald's configuration and restart it")
            }
            try await writer.succeed(try link(now))
        case .study:
            try await study(request, writer: writer, now: now)
        case .task:
            guard let mark = request.action.flatMap(TaskMark.init(rawValue:)) else {
                throw ControlUsageError("task needs begin, end or outcome")
            }
            try await writer.succeed(try await studies.mark(
                mark, task: try required(request.task, "a task name"), outcome: try request.outcome.map { try TaskOutcome(checking: $0) },
                comment: request.text, in: try sessionKey(request), source: .muevalctl, observer: peer?.userName, now: now))
        case .questionnaire:
            try await writer.succeed(try studies.record(try required(request.responses, "answers"), in: try required(request.study, "a study")))
        }
        return .readNextRequest
    }

    /// `import`: the files come open from the client, which may read them; read on a thread of its own
    /// (a file can take minutes), then announced like a stop.
    private func importFiles(_ request: ControlRequest, passedBy client: PassedFiles?, now: Double) async throws -> [ImportOutcome] {
        let names = try required(request.files, "files to import")
        guard request.descriptors == true, let client else {
            throw ControlUsageError("muevald opens no file for its clients: pass them open (\"descriptors\": true, docs/CONTROL.md); "
                                    + "an older muevalctl must be updated to this muevald's version")
        }
        guard (1...DescriptorPassing.maxDescriptors).contains(names.count) else {
            throw ControlUsageError("import takes 1 to \(DescriptorPassing.maxDescriptors) files at a time")
        }
        let into = try request.into.map { try registry.find($0) }
        let assignment = try assignment(request)
        let descriptors = try await client.receive(names.count)
        // Every descriptor is wrapped before any failure is thrown, so that each is closed.
        let opened = zip(names, descriptors).map { name, descriptor in Result { () throws(ImportError) in try ImportFile(name: name, descriptor: descriptor) } }
        let files = try opened.map { try $0.get() }
        let importRequest = ImportRequest(files: files, format: request.importFormat, name: request.name, testUser: request.user,
                                          assignment: assignment, into: into, again: request.again == true)
        let outcomes = try await NIOThreadPool.singleton.runIfActive { [importer] in try importer.run(importRequest, now: now) }
        for outcome in outcomes { registry.imported(outcome.session, from: outcome.file, now: now) }
        return outcomes
    }

    private func study(_ request: ControlRequest, writer: ControlReplyWriter, now: Double) async throws {
        guard let action = request.action.flatMap(StudyAction.init(rawValue:)) else {
            throw ControlUsageError("study needs one of \(StudyAction.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var name: String { get throws { try required(request.study, "a study name") } }
        switch action {
        case .list:
            try await writer.succeed(try studies.list())
        case .create:
            try await writer.succeed(try studies.create(name: name, appId: request.appId, description: request.label, now: now))
        case .show:
            try await writer.succeed(try studies.data(name))
        case .addIteration:
            try await writer.succeed(try studies.addIteration(to: name, number: request.iteration, label: request.label, now: now))
        case .addTask:
            try await writer.succeed(try studies.addTask(to: name, try required(request.newTask, "the task")))
        case .addParticipant:
            try await writer.succeed(try studies.addParticipant(to: name, Participant(
                code: try required(request.participant, "a participant code"), attributes: request.attributes ?? [:], created: now)))
        case .addQuestion:
            try await writer.succeed(try studies.addQuestion(to: name, StudyQuestion(
                id: try required(request.name, "a question id"), text: try required(request.label, "the question's text"))))
        }
    }

    /// `start --study S --iteration N --participant P`: all three or none.
    private func assignment(_ request: ControlRequest) throws -> StudyAssignment? {
        switch (request.study, request.iteration, request.participant) {
        case (nil, nil, nil):
            return nil
        case (let study?, let iteration?, let participant?):
            return StudyAssignment(study: study, iteration: iteration, participant: participant)
        default:
            throw ControlUsageError("a session in a study needs --study, --iteration and --participant together")
        }
    }

    private func required<T>(_ value: T?, _ what: String) throws -> T {
        guard let value else { throw ControlUsageError("\(what) is missing") }
        return value
    }

    /// Streams tail lines until the client hangs up, the followed session stops or the daemon stops.
    ///
    /// The subscription starts before the history is read, so no event falls between the two;
    /// live events already shown as history are left out by id.
    private func tail(_ request: ControlRequest, writer: ControlReplyWriter) async throws -> Continuation {
        let followed = request.all == true ? nil : try registry.find(try sessionKey(request))
        let filter = TailFilter(sessions: followed.map { [$0.id] }, classes: Set(request.classes ?? []),
                                device: request.device, grep: request.grep)
        let subscription = liveTail.subscribe(filter, capacity: settings.current.tailBuffer)
        defer { subscription.cancel() }
        writer.closeFuture.whenComplete { _ in subscription.cancel() }

        var shownUpTo: [Int64: Int64] = [:]
        if let since = request.since, since > 0 {
            for record in followed.map({ [$0] }) ?? registry.openSessions().map(\.snapshot) {
                try await forEachPage(of: record, classes: request.classes ?? [], last: since) { history in
                    shownUpTo[record.id] = history.last?.id
                    try await writer.tail(history.map { TailLine.event($0, session: record.id) }.filter(filter.admits))
                }
            }
        }
        if let followed, followed.state == .stopped {
            try await writer.succeed(Empty())
            return .readNextRequest
        }
        while let lines = await subscription.next() {
            let fresh = lines.filter { line in
                guard let session = line.session, let id = line.event?.id, let shown = shownUpTo[session] else { return true }
                return id > shown
            }
            try await writer.tail(fresh)
            // No final line: the client learns from the closed connection that the daemon is gone.
            if lines.contains(where: { $0.kind == .daemonStopping }) { return .close }
            if followed != nil, lines.contains(where: { $0.kind == .sessionStopped }) { break }
        }
        try await writer.succeed(Empty())
        return .readNextRequest
    }

    /// Streams the export as text chunks of about `pageBytes`, so that no session has to fit in memory.
    private func export(_ record: SessionRecord, format: ExportFormat, classes: [String], writer: ControlReplyWriter) async throws {
        let exporter = try JournalExporter(path: record.path, format: format)
        var chunk = exporter.header
        let count = try await forEachPage(of: record, classes: classes, last: nil) { page in
            for event in page {
                chunk += try exporter.encode(event)
                // A screenshot can be megabytes: the chunk ends as soon as it is large enough.
                if chunk.count >= Self.pageBytes {
                    try await writer.chunk(String(decoding: chunk, as: UTF8.self))
                    chunk.removeAll(keepingCapacity: true)
                }
            }
        }
        // Media, transcript and the session's own record follow the events, unless only some classes were
        // asked for; a page at a time.
        if classes.isEmpty {
            let reader = try SessionReader(path: record.path)
            var cursor: Int64 = 0
            while case let page = try reader.mediaPage(afterID: cursor, limit: 64, maxBytes: Self.pageBytes), let last = page.last {
                for (_, media) in page { chunk += try exporter.encode(media) }
                try await writer.chunk(String(decoding: chunk, as: UTF8.self))
                chunk.removeAll(keepingCapacity: true)
                cursor = last.id
            }
            for segment in try reader.transcript() { chunk += try exporter.encode(segment) }
            // The session itself last (readers that take every element for an event stop at the first one that is not).
            // Named with this lab, so that an import into another lab gives it a uuid of its own.
            if let session = try exporter.exportedSession(lab: importer.lab) { chunk += try exporter.encode(session) }
            // A jsonl export names its data values by SHA-256: their bytes follow, so that it imports whole.
            if format == .jsonl {
                var cursor = ""
                while case let page = try reader.blobPage(after: cursor, limit: 64, maxBytes: Self.pageBytes), let last = page.last {
                    for blob in page { chunk += try exporter.encodeBlob(sha256: blob.sha256, bytes: blob.bytes) }
                    try await writer.chunk(String(decoding: chunk, as: UTF8.self))
                    chunk.removeAll(keepingCapacity: true)
                    cursor = last.sha256
                }
            }
        }
        try await writer.chunk(String(decoding: chunk + exporter.footer, as: UTF8.self))
        try await writer.succeed(ExportSummary(session: record.id, format: format, events: Int64(count)))
    }

    /// `events --grep`: the last `limit` events (0: all) whose class, device or payload contains
    /// `text` (as a tail's grep), and the transcript's speech that contains it, merged in time order.
    /// Holds at most `limit` events, however long the session.
    private func events(_ record: SessionRecord, matching text: String, classes: [String], limit: Int,
                        writer: ControlReplyWriter) async throws {
        let filter = TailFilter(classes: Set(classes), grep: text)
        let reader = try SessionReader(path: record.path)
        var speech = classes.isEmpty ? try reader.transcript().filter { $0.contains(text) }[...] : []
        var kept = Deque<StoredEvent>()
        var streamed = 0
        try await forEachPage(of: record, classes: classes, last: nil) { page in
            let matches = page.filter { filter.admits(.event($0, session: record.id)) }
            if limit > 0 {
                kept.append(contentsOf: matches)
                if kept.count > limit { kept.removeFirst(kept.count - limit) }
            } else {
                streamed += try await write(matches, with: &speech, writer: writer)
            }
        }
        if limit > 0 { streamed = try await write(Array(kept), with: &speech, writer: writer) }
        let spoken = Int64(speech.startIndex)
        if !speech.isEmpty { try await writer.speech(Array(speech)) }
        try await writer.succeed(EventsSummary(session: record.id, events: Int64(streamed), speech: spoken + Int64(speech.count)))
    }

    /// Writes `events` with the speech said before each of them first; returns how many events.
    private func write(_ events: [StoredEvent], with speech: inout ArraySlice<TranscriptSegment>,
                       writer: ControlReplyWriter) async throws -> Int {
        var start = 0
        for (index, event) in events.enumerated() {
            let before = speech.prefix { $0.start <= event.timestamp }
            guard !before.isEmpty else { continue }
            if index > start { try await writer.events(Array(events[start..<index])) }
            try await writer.speech(Array(before))
            speech.removeFirst(before.count)
            start = index
        }
        if start < events.count { try await writer.events(Array(events[start...])) }
        return events.count
    }

    /// `media`: each stream of the session as one file, in pieces small enough for a reply line.
    private func media(_ record: SessionRecord, writer: ControlReplyWriter) async throws {
        let reader = try SessionReader(path: record.path)
        let streams = try reader.mediaStreams()
        var files: [MediaSummary.File] = []
        for stream in streams {
            guard let layout = try reader.mediaLayout(device: stream.device, stream: stream.stream) else { continue }
            let file = stream.fileName(among: streams)
            var offset: Int64 = 0
            while offset < layout.totalBytes {
                let end = min(layout.totalBytes, offset + Int64(Self.pageBytes))
                let bytes = try reader.mediaBytes(layout, range: offset..<end)
                try await writer.media(MediaPiece(file: file, base64: Data(bytes).base64EncodedString()))
                offset = end
            }
            files.append(MediaSummary.File(file: file, bytes: layout.totalBytes, stream: stream))
        }
        try await writer.succeed(MediaSummary(session: record.id, files: files))
    }

    /// Events per page of a streamed reply, and the payload bytes after which a page ends early.
    static let pageEvents = 500
    static let pageBytes = 1 << 20

    /// Reads the events of `record` (the newest `last` of them, or all) a page at a time and hands
    /// each page to `body`: `events`, `export` and a tail's history hold one page, never a session.
    @discardableResult
    private func forEachPage(of record: SessionRecord, classes: [String], last: Int?,
                             _ body: ([StoredEvent]) async throws -> Void) async throws -> Int {
        let reader = try SessionReader(path: record.path)
        var cursor = try last.map { try reader.idBefore(last: $0, classes: classes) } ?? 0
        var remaining = last ?? .max
        var count = 0
        while remaining > 0 {
            let page = try reader.page(classes: classes, afterID: cursor, limit: min(remaining, Self.pageEvents),
                                       maxBytes: Self.pageBytes)
            guard let newest = page.last else { break }
            try await body(page)
            cursor = newest.id
            remaining -= page.count
            count += page.count
        }
        return count
    }

    private func sessionKey(_ request: ControlRequest) throws -> String {
        guard let session = request.session, !session.isEmpty else {
            throw ControlUsageError("\(request.command.rawValue) needs a session id or name")
        }
        return session
    }
}

struct ControlUsageError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

internal import Foundation
internal import JournalStorage
internal import MuEvalWire
public import SessionModel
internal import WireProtocol

/// One session file, as the interpreters read it: its description and its events, streamed.
/// Needs only the file, so that a copied session file is analysed away from the daemon.
public final class SessionJournal {
    public let path: String
    /// Where the pass's scratch files go (`ScratchFile`): beside the session file, on the disk that holds sessions.
    var scratchDirectory: String { (path as NSString).deletingLastPathComponent }
    public let session: SessionRecord
    public let devices: [DeviceRecord]
    public let gaps: [SessionGap]
    private let reader: SessionReader

    public init(path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else { throw AnalysisError.fileNotFound(path) }
        self.path = path
        do {
            reader = try SessionReader(path: path)
            guard let session = try reader.session() else {
                throw AnalysisError.notASessionFile(path: path, reason: "its session table is empty")
            }
            self.session = session
            devices = try reader.devices()
            // A gap that began at no plausible time is missing; one whose end is not plausible lasted to the end.
            gaps = try reader.gaps().compactMap { gap in
                guard Plausible.time(gap.start) != nil else { return nil }
                return SessionGap(start: gap.start, end: gap.end.flatMap(Plausible.time), reason: gap.reason)
            }
        } catch let error as AnalysisError {
            throw error
        } catch {
            throw AnalysisError.notASessionFile(path: path, reason: "\(error)")
        }
    }

    /// The one ordered pass (issue 41): every event of the classes the readers read, read once in storage
    /// order and its payload decoded once for all of them; then each reader puts its result on the blackboard.
    /// Reading and decoding run on a thread of their own, the readers on the caller's: the pass uses two cores.
    public func read(with readers: [any JournalReader], into results: inout ResultStore) throws {
        let plan = JournalRoutes(readers)
        let pipe = JournalPipe()
        let producing = DispatchSemaphore(value: 0)
        // The caller waits for this thread before it returns: the journal is never used by two threads at once.
        nonisolated(unsafe) let journal = self
        Thread {
            defer { producing.signal() }
            journal.produce(into: pipe, routes: plan)
        }.start()
        defer {
            pipe.cancel()
            producing.wait()
        }
        var routes = plan
        var batch: [JournalPipe.Item]?
        while true {
            batch = try pipe.take(returning: batch)
            guard let batch else { break }
            for item in batch {
                switch item {
                case .event(let event):
                    for index in routes.route(of: event.eventClass).readers { try readers[index].read(event) }
                case .implausible(let stored):
                    for index in routes.route(of: stored.eventClass).readers { readers[index].skip(implausible: stored) }
                }
            }
        }
        for reader in readers { try reader.finish(into: &results) }
    }

    /// The reading half of the pass: what the readers read, decoded where one needs the payload, in batches.
    private func produce(into pipe: JournalPipe, routes: JournalRoutes) {
        var routes = routes
        var batch: [JournalPipe.Item] = []
        batch.reserveCapacity(JournalPipe.batchSize)
        func add(_ item: JournalPipe.Item) throws {
            batch.append(item)
            guard batch.count == JournalPipe.batchSize else { return }
            _ = try pipe.put(batch)
            batch = []
            batch.reserveCapacity(JournalPipe.batchSize)
        }
        do {
            try reader.forEachEvent(classes: routes.classes) { stored in
                let route = routes.route(of: stored.eventClass)
                guard !route.readers.isEmpty else { return }
                guard Plausible.time(stored.timestamp) != nil else { return try add(.implausible(stored)) }
                try add(.event(route.decodes ? try decoded(stored)
                    : JournalEvent(id: stored.id, eventClass: stored.eventClass, time: stored.timestamp, payload: .dict([:]))))
            }
            if !batch.isEmpty { _ = try pipe.put(batch) }
            pipe.close(failure: nil)
        } catch {
            pipe.close(failure: error)
        }
    }

    private func decoded(_ stored: StoredEvent) throws -> JournalEvent {
        let payload: PlistValue
        do {
            payload = try TypedJSON.decodeLeavingBlobs(stored.payload.utf8)
        } catch {
            throw AnalysisError.unreadablePayload(path: path, event: stored.id, reason: "\(error)")
        }
        return JournalEvent(id: stored.id, eventClass: stored.eventClass, time: stored.timestamp,
                            payload: Plausible.payload(payload) ?? payload)
    }

    /// What the tester said, from the transcription (empty before it, and in files without audio); a
    /// segment whose times are not plausible is left out.
    public func transcript() throws -> [TranscriptSegment] {
        try reader.transcript().filter { segment in
            guard let start = Plausible.time(segment.start), let end = Plausible.time(segment.end) else { return false }
            return start <= end
        }
    }

    /// The session's media streams; one that starts at no plausible time cannot be placed, and is left out.
    public func mediaStreams() throws -> [MediaStreamRecord] {
        try reader.mediaStreams().filter { Plausible.time($0.start) != nil }
    }

    /// Writes a stream as one playable file at `path` (the report's copy of the voice), chunk by chunk.
    public func writeMedia(_ stream: MediaStreamRecord, to path: String) throws {
        guard let layout = try reader.mediaLayout(device: stream.device, stream: stream.stream) else { return }
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw AnalysisError.fileNotFound(path)
        }
        defer { try? handle.close() }
        try reader.writeMedia(layout) { try handle.write(contentsOf: $0) }
    }

    /// The events of `classes` as they are stored, in storage order, their payloads not decoded: for what reads a few
    /// classes apart from the one pass (the report's page records, whose payloads only it reads).
    public func forEachStoredEvent(classes: [String], _ body: (StoredEvent) throws -> Void) throws {
        guard !classes.isEmpty else { return }
        try reader.forEachEvent(classes: classes, body)
    }

    public func blob(sha256: String) throws -> [UInt8]? {
        try reader.blob(sha256: sha256)
    }

    /// The recording device's screen in points, as it said in its hello.
    public var screenSize: Size? {
        let device = devices.first { $0.id == session.device } ?? devices.first
        guard let width = device?.screenWidth.flatMap(Plausible.length), let height = device?.screenHeight.flatMap(Plausible.length),
              width > 0, height > 0 else { return nil }
        return Size(width: width, height: height)
    }
}

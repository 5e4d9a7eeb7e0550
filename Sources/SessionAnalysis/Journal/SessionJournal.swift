internal import Foundation
internal import JournalStorage
public import SessionModel
internal import WireProtocol

/// One session file, as the interpreters read it: its description and its events, streamed.
/// Needs only the file, so that a copied session file is analysed away from the daemon.
public final class SessionJournal {
    public let path: String
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
            gaps = try reader.gaps()
        } catch let error as AnalysisError {
            throw error
        } catch {
            throw AnalysisError.notASessionFile(path: path, reason: "\(error)")
        }
    }

    /// Stored events in storage order, payloads left as text: for passes that need no payload.
    public func forEachStoredEvent(classes: [String] = [], _ body: (StoredEvent) throws -> Void) throws {
        try reader.forEachEvent(classes: classes, body)
    }

    /// Events in storage order with their payloads decoded; screenshots stay references to their blobs.
    public func forEachEvent(classes: [String] = [], _ body: (JournalEvent) throws -> Void) throws {
        try reader.forEachEvent(classes: classes) { stored in
            let payload: PlistValue
            do {
                payload = try TypedJSON.decodeLeavingBlobs(stored.payload.utf8)
            } catch {
                throw AnalysisError.unreadablePayload(path: path, event: stored.id, reason: "\(error)")
            }
            try body(JournalEvent(id: stored.id, eventClass: stored.eventClass, time: stored.timestamp, payload: payload))
        }
    }

    /// What the tester said, from the transcription (empty before it, and in files without audio).
    public func transcript() throws -> [TranscriptSegment] {
        try reader.transcript()
    }

    public func mediaStreams() throws -> [MediaStreamRecord] {
        try reader.mediaStreams()
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

    public func blob(sha256: String) throws -> [UInt8]? {
        try reader.blob(sha256: sha256)
    }

    /// The recording device's screen in points, as it said in its hello.
    public var screenSize: Size? {
        let device = devices.first { $0.id == session.device } ?? devices.first
        guard let width = device?.screenWidth, let height = device?.screenHeight else { return nil }
        return Size(width: width, height: height)
    }
}

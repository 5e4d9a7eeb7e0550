internal import Foundation
internal import GroupCommit
internal import JournalStorage
public import MuEvalWire
public import OrderedCollections
public import SessionModel
internal import WireProtocol

/// Writes a session file with exactly the events given, through the daemon's own writer, so that tests and
/// the benchmark read what muevald would have stored.
public final class JournalBuilder {
    public let path: String
    public let device: DeviceRecord
    private let writer: JournalWriter
    private var session: SessionRecord
    private var seq: Int64 = 0
    private var batch: [JournalRecord] = []
    private let studyContext: StudyContext?

    /// A 320 × 480 point phone, like the simulator's iPhone 4.
    public static func phone(_ id: String = "device-1") -> DeviceRecord {
        DeviceRecord(id: id, device: DeviceDescription(name: "Jack's iPhone", model: "iPhone3,1", systemVersion: "4.3", appId: "org.example.app",
                                                       appVersion: "1.0", screenWidth: 320, screenHeight: 480, screenScale: 2),
                     firstSeen: 0, lastSeen: 0)
    }

    /// `studyContext`: the study, iteration and participant the session records, written into the file as
    /// muevald writes it at a study session's start.
    public init(path: String, name: String = "test session", testUser: String? = "Jack",
                device: DeviceRecord = JournalBuilder.phone(), studyContext: StudyContext? = nil) throws {
        self.path = path
        self.device = device
        self.studyContext = studyContext
        writer = try JournalWriter(path: path, limits: JournalWriterLimits(synchronous: .normal)) { _ in }
        session = SessionRecord(id: 1, uuid: UUID().uuidString, name: name, testUser: testUser, device: device.id,
                                state: .stopped, created: 0, path: path, assignment: studyContext?.assignment)
    }

    /// Adds a media chunk (think-aloud audio), numbered in the device's sequence with the events.
    public func add(media: WireMedia) {
        seq += 1
        var chunk = media
        chunk.seq = seq
        batch.append(JournalRecord(device: device.id, received: media.start, content: .media(chunk), origin: 1))
    }

    /// Adds one event; `fields` are everything but `class`, `timestamp` and `seq`.
    public func add(_ eventClass: String, at time: Double, _ fields: OrderedDictionary<String, PlistValue>) {
        seq += 1
        var dict: OrderedDictionary<String, PlistValue> = [
            "class": .string(eventClass), "timestamp": .real(time), "seq": .integer(seq),
        ]
        dict.merge(fields) { current, _ in current }
        let (json, blobs) = TypedJSON.encode(.dict(dict))
        batch.append(JournalRecord(device: device.id, received: time,
                                   event: WireEvent(eventClass: eventClass, timestamp: time, seq: seq, sensor: nil,
                                                    payload: json, blobs: blobs),
                                   origin: 1))
    }

    /// Adds an event as a device sends it, in the wire format (what the simulator produces).
    public func add(wire bytes: [UInt8]) throws {
        var decoder = WireDecoder()
        decoder.append(bytes)
        guard case .success(.event(let event))? = decoder.next() else { throw BuilderError.notAnEvent }
        batch.append(JournalRecord(device: device.id, received: event.timestamp ?? 0, event: event, origin: 1))
    }

    /// What the tester said (as muevald's transcription writes it), written with the session's description.
    public var transcript: [TranscriptSegment] = []

    /// Hands the events added so far to the writer; the benchmark calls it now and then to bound memory.
    public func commit() async throws {
        _ = writer.append(batch)
        batch = []
        try await writer.flush()
    }

    /// Writes the session's description and closes the file: it is then a complete, stopped session file.
    public func finish() async throws {
        try await commit()
        let session = session, device = device, studyContext = studyContext, transcript = transcript
        try await writer.perform { file in
            try file.writeMetadata(session)
            try file.writeDevice(device)
            if let studyContext { try file.writeStudyContext(studyContext) }
            for (stream, segments) in Dictionary(grouping: transcript, by: \.stream) {
                try file.writeTranscript(device: device.id, stream: stream, segments: segments)
            }
        }
        try await writer.close()
    }

    public enum BuilderError: Error {
        case notAnEvent
    }
}

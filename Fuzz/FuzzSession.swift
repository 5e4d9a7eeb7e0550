// A session file made from a fuzzer's input, written through the daemon's own storage (`SessionFile`, which
// muevald's group commit drives): what a device could have sent before values were checked at the edge, or
// what a crafted or imported file holds. Any class, any field, any value; media chunks with any part, start
// and header; gaps; transcripts; a device with any screen; a study context.
//
// The input, read by `FuzzInput`: the device's screen (3 doubles), the session's created/started/stopped
// times, then records until the input ends, each a selector byte and its fields (see `record`).

internal import Foundation
internal import JournalStorage
internal import MuEvalWire
internal import OrderedCollections
internal import SessionModel
internal import WireProtocol

enum FuzzSession {
    static let device = "fuzz-device"
    /// Enough for every interpreter's paths; more only slows the fuzzer down.
    static let maxRecords = 2_000

    enum Record: UInt8 {
        case event = 0, media = 5, openGap = 6, closeGaps = 7, transcript = 8
    }
    /// What a selector byte picks (modulo its count): mostly events.
    static let recordKinds: [Record] = [.event, .event, .event, .event, .event, .media, .openGap, .closeGaps, .transcript]

    /// Writes the session file at `path`; returns its record (id 1, stopped).
    @discardableResult
    static func write(_ input: inout FuzzInput, to path: String, study: StudyContext? = nil) throws -> SessionRecord {
        let description = DeviceDescription(name: "fuzz", model: "iPhone3,1", screenWidth: input.double(),
                                            screenHeight: input.double(), screenScale: input.double())
        let device = DeviceRecord(id: device, device: description, firstSeen: 0, lastSeen: 0)
        var session = SessionRecord(id: 1, uuid: "00000000-0000-0000-0000-000000000001", name: "fuzz", testUser: "P01",
                                    device: device.id, state: .stopped, created: input.time(), started: input.time(),
                                    stopped: input.time(), path: path, assignment: study.map {
                                        StudyAssignment(study: $0.study, iteration: $0.iteration.number, participant: $0.participant.code)
                                    })
        let file = try SessionFile(path: path, synchronous: .normal)
        var batch: [JournalRecord] = []
        var transcript: [String: [TranscriptSegment]] = [:]
        var seq: Int64 = 0
        var count = 0
        while !input.isEmpty, count < maxRecords {
            count += 1
            seq += 1
            switch recordKinds[input.below(recordKinds.count)] {
            case .event:
                let eventClass = input.string(FuzzTables.classes)
                let time = input.time()
                var fields: OrderedDictionary<String, PlistValue> = ["class": .string(eventClass), "timestamp": .real(time), "seq": .integer(seq)]
                fields.merge(input.dict()) { _, new in new }
                let (json, blobs) = TypedJSON.encode(.dict(fields))
                batch.append(JournalRecord(device: device.id, received: time,
                                           event: WireEvent(eventClass: eventClass, timestamp: time, seq: seq, sensor: nil,
                                                            payload: json, blobs: blobs), origin: 1))
            case .media:
                let stream = input.string(["microphone", "faceCamera"])
                let format = MediaFormat.allCases[input.below(MediaFormat.allCases.count)]
                let part = input.integer()
                let start = input.time()
                let duration: Double? = input.bool() ? input.double() : nil
                var bytes: [UInt8] = []
                if input.bool() {
                    // Any 32-bit rate: the header's fields are 32 bits.
                    bytes = WAVFile.header(sampleRate: Int(UInt32(truncatingIfNeeded: input.integer())), dataBytes: input.bool() ? nil : Int(input.byte()))
                }
                bytes += input.bytes(Int(input.byte()) * 4)
                batch.append(JournalRecord(device: device.id, received: start,
                                           content: .media(WireMedia(stream: stream, format: format, part: part, start: start,
                                                                     duration: duration, seq: seq, bytes: bytes)), origin: 1))
            case .openGap:
                try file.openGap(at: input.time(), reason: input.string())
            case .closeGaps:
                try file.closeGaps(at: input.time())
            case .transcript:
                let stream = input.string(["microphone", "faceCamera"])
                transcript[stream, default: []].append(TranscriptSegment(
                    device: device.id, stream: stream, start: input.time(), end: input.time(), text: input.string(),
                    confidence: input.bool() ? input.double() : nil, exclamation: input.bool() ? input.string() : nil))
            }
        }
        _ = try file.store([batch])
        session.events = Int64(batch.count)
        try file.writeMetadata(session)
        try file.writeDevice(device)
        if let study { try file.writeStudyContext(study) }
        for (stream, segments) in transcript {
            try file.writeTranscript(device: device.id, stream: stream, segments: segments)
        }
        try file.finish(buildingIndexes: true)
        return session
    }

    /// A seed from a real session: a session file (the fixtures') or a device's wire stream (`muevalsim
    /// --dry-run`): its device, times, events and media in the input format, so that the fuzzer starts from
    /// sessions as they are recorded.
    static func seed(from path: String) throws -> [UInt8] {
        var writer = SeedWriter()
        if path.hasSuffix(".sqlite") {
            let reader = try SessionReader(path: path)
            let device = try reader.devices().first
            let session = try reader.session()
            writer.header(device?.screenWidth, device?.screenHeight, device?.screenScale,
                          times: [session?.created, session?.started, session?.stopped])
            try reader.forEachEvent { event in
                let payload = try? TypedJSON.decode(Array(event.payload.utf8), blob: { try reader.blob(sha256: $0) ?? [] })
                writer.event(event.eventClass, at: event.timestamp, payload)
            }
        } else {
            var decoder = WireDecoder()
            decoder.append(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            while let message = decoder.next() {
                switch message {
                case .success(.hello(let hello)):
                    writer.header(hello.screenWidth, hello.screenHeight, hello.screenScale, times: [1_298_000_000, 1_298_000_000, nil])
                case .success(.event(let event)):
                    let payload = try? TypedJSON.decode(event.payload, blob: { sha in event.blobs.first { $0.sha256 == sha }?.bytes ?? [] })
                    writer.event(event.eventClass, at: event.timestamp ?? 0, payload)
                case .success(.media(let media)):
                    writer.media(media)
                default:
                    break
                }
            }
        }
        return writer.bytes
    }
}

extension SeedWriter {
    mutating func header(_ width: Double?, _ height: Double?, _ scale: Double?, times: [Double?]) {
        double(width ?? 320)
        double(height ?? 480)
        double(scale ?? 2)
        for time in times { byte(128); double(time ?? 0) }
    }

    mutating func event(_ eventClass: String, at time: Double, _ payload: PlistValue?) {
        byte(FuzzSession.Record.event.rawValue)
        string(eventClass, FuzzTables.classes)
        byte(128)
        double(time)
        guard case .dict(var fields)? = payload else { return byte(0) }
        for key in ["class", "timestamp", "seq"] { fields[key] = nil }
        dict(fields)
    }

    mutating func media(_ media: WireMedia) {
        byte(FuzzSession.Record.media.rawValue)
        string(media.stream, ["microphone", "faceCamera"])
        byte(UInt8(MediaFormat.allCases.firstIndex(of: media.format) ?? 0))
        integer(media.part)
        byte(128)
        double(media.start)
        if let duration = media.duration { byte(1); double(duration) } else { byte(0) }
        // The bytes as they are (their header too): no header made by the harness, then up to 1020 bytes.
        byte(0)
        let kept = media.bytes.prefix(1020)
        byte(UInt8(kept.count / 4))
        bytes += kept.prefix(kept.count / 4 * 4)
    }
}

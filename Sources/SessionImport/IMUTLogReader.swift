internal import MuEvalWire
internal import OrderedCollections
internal import SessionModel
internal import WireProtocol

/// Reads an IMUT log (seed 004; the format as fza/IMUTLib writes it, docs/IMPORT.md): a JSON array of
/// packets, each with `type` (`session-init`, `sync`, `events`, `final`), `sid` and `seq`. `sync` gives
/// the session's start (`abs-date-time`, or `abs-time` in the earlier format); an `events` packet's
/// `rel-time` is seconds since then, its `events` (earlier: `payload`) the module events of that moment.
struct IMUTLogReader: ImportReader {
    let context: ImportContext
    private var mapping = IMUTEventMapping()
    private var start: Double?
    private var sessionID: String?
    private var device: DeviceRecord?
    private var lastTime = -Double.infinity
    private var sawFinal = false
    /// The packet being read, from 1.
    private var packetNumber = 0
    private var recordings: [NamedRecording] = []
    private var recorderStarts: [String: Double] = [:]

    init(context: ImportContext) {
        self.context = context
    }

    private var deviceID: String { "imut-" + (sessionID ?? "log") }

    mutating func read(_ chunks: inout FileChunks, into draft: SessionDraft) throws -> ReadSummary {
        var scanner = JSONArrayScanner()
        try scanner.forEachElement(in: &chunks, file: context.file) { bytes, at in
            packetNumber += 1
            try packet(bytes, at: at, into: draft)
        }
        var cutShort: String?
        switch scanner.ending {
        case .empty: throw ImportError(file: context.file, "is empty")
        case .closed: if !sawFinal { cutShort = "the log has no final packet: the app stopped before IMUT finished it" }
        case .unclosed: cutShort = "the log ends without its closing ']' (an unfinished .tmp log): imported up to its last whole packet"
        case .insideElement(let at):
            cutShort = "the log ends inside the packet at line \(at.line), column \(at.column) (an unfinished .tmp log): imported up to the packet before it"
        }
        guard start != nil else {
            throw ImportError(file: context.file, "has no sync packet (\"abs-date-time\"): its events cannot be put on a clock")
        }
        try draft.flush()
        if var device {
            device.firstSeen = draft.firstTimestamp ?? start!
            device.lastSeen = draft.lastTimestamp ?? start!
            try draft.addDevice(device)
        }
        return ReadSummary(device: device, cutShort: cutShort, recordings: recordings)
    }

    private mutating func packet(_ bytes: [UInt8], at position: TextPosition, into draft: SessionDraft) throws {
        let value: PlistValue
        switch bytes.withUnsafeBufferPointer({ p in Result { () throws(TypedJSONError) in try PlainJSON.decode(p) } }) {
        case .success(let decoded): value = decoded
        case .failure(let error):
            throw ImportError(file: context.file, at: position.advanced(over: bytes.prefix(error.offset)).errorPosition, error.message)
        }
        func fail(_ reason: String) -> ImportError {
            ImportError(file: context.file, at: position.errorPosition, "packet \(packetNumber): " + reason)
        }
        guard case .dict(let packet) = value else { throw fail("a packet must be an object") }
        guard let type = packet["type"]?.string else { throw fail("a packet needs a \"type\" string") }
        if sessionID == nil { sessionID = packet["sid"]?.string }
        switch type {
        case "session-init":
            let record = deviceRecord(packet["meta"])
            if let problem = ValueRanges.default.problem(screenWidth: record.screenWidth, screenHeight: record.screenHeight,
                                                         screenScale: record.screenScale) {
                throw fail("meta's screen-size: " + problem.description)
            }
            device = record
        case "sync":
            guard let text = (packet["abs-date-time"] ?? packet["abs-time"])?.string else {
                throw fail("a sync packet needs \"abs-date-time\" (or \"abs-time\"), an ISO 8601 date")
            }
            guard let time = ISO8601.parse(text) else { throw fail("\"\(text)\" is not an ISO 8601 date like 2014-07-05T14:03:22+02:00") }
            if start == nil { start = time }
        case "events":
            guard let start else { throw fail("an events packet before the sync packet that starts the session's clock") }
            guard let relative = packet["rel-time"]?.number else { throw fail("an events packet needs \"rel-time\", a number of seconds") }
            if relative < lastTime - context.limits.maxTimeRegression {
                throw fail("time goes backwards: rel-time \(relative) after \(lastTime) (more than import.max-time-regression, \(context.limits.maxTimeRegression) s)")
            }
            lastTime = max(lastTime, relative)
            guard let events = (packet["events"] ?? packet["payload"])?.array else {
                throw fail("an events packet needs \"events\" (or \"payload\"), an array")
            }
            for (index, entity) in events.enumerated() {
                do {
                    try store(entity, at: start + relative, into: draft)
                } catch let failure as IMUTEventMapping.Failure {
                    throw fail("events[\(index)]: " + failure.reason)
                } catch let refused as WireError {
                    // A value outside its range (docs/PROTOCOL.md, "Value ranges"): the file is refused, as for any bad record.
                    throw fail("events[\(index)]: " + refused.message)
                } catch DraftLimit.tooManyEvents {
                    throw fail("more events than import.max-events (\(context.limits.maxEvents)); raise it in muevald's configuration")
                }
            }
            try draft.flushIfFull()
        case "final":
            sawFinal = true
        default:
            throw fail("unknown packet type \"\(type)\"; expected session-init, sync, events or final")
        }
    }

    private mutating func store(_ entity: PlistValue, at time: Double, into draft: SessionDraft) throws {
        guard case .dict(let entity) = entity else { throw IMUTEventMapping.Failure(reason: "an event must be an object") }
        guard let name = entity["event"]?.string else { throw IMUTEventMapping.Failure(reason: "an event needs an \"event\" name") }
        let params: OrderedDictionary<String, PlistValue>
        switch entity["params"] {
        case nil: params = [:]
        case .dict(let dict)?: params = dict
        case let other?: throw IMUTEventMapping.Failure(reason: "\(name)'s \"params\" must be an object, found \(other.kindDescription)")
        }
        let mapped = try mapping.map(event: name, type: entity["type"]?.string ?? "unknown", params: params, mark: entity["mark"]?.string)
        noteRecording(mapped, at: time)
        var fields: OrderedDictionary<String, PlistValue> = ["class": .string(mapped.eventClass.rawValue), "timestamp": .date(time)]
        fields.merge(mapped.fields) { kept, _ in kept }
        try draft.add(try WireEvent(fields: fields), device: deviceID, received: time)
    }

    /// A recorder's stop names its file: remembered with the start's time, to attach the video.
    private mutating func noteRecording(_ mapped: IMUTEventMapping.Mapped, at time: Double) {
        guard mapped.eventClass == .application, let recorder = mapped.fields["recorder"]?.string else { return }
        if mapped.fields["type"]?.string == "recorderStart" {
            recorderStarts[recorder] = time
        } else if let file = mapped.fields["file"]?.string {
            let duration = mapped.fields["duration"]?.number
            recordings.append(NamedRecording(file: file, recorder: recorder, start: recorderStarts[recorder] ?? time - (duration ?? 0),
                                             duration: duration))
        }
    }

    /// The device as `session-init`'s `meta` describes it.
    private func deviceRecord(_ meta: PlistValue?) -> DeviceRecord {
        let meta = meta ?? .dict([:])
        let points = meta["screen-size"]?["points"]
        let device = DeviceDescription(name: meta["device-model"]?.string.map { "\($0) (IMUT)" }, model: meta["device-model"]?.string,
                                       systemVersion: meta["platform-version"]?.string, appId: meta["app-id"]?.string,
                                       appVersion: meta["app-version"]?.string, screenWidth: points?["width"]?.number,
                                       screenHeight: points?["height"]?.number, screenScale: meta["screen-size"]?["scale"]?.number)
        return DeviceRecord(id: deviceID, device: device, firstSeen: 0, lastSeen: 0)
    }
}

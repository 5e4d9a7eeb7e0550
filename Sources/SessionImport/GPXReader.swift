internal import Foundation
internal import FoundationXML
internal import MuEvalWire
internal import OrderedCollections
internal import SessionModel
internal import WireProtocol

/// Reads a GPX 1.1 track (as seed 001's TrackApp writes it): every `<trkpt>` with its `<time>` becomes a
/// `DeviceSensorEvent` of sensor `location`. Streams through libxml2 (Foundation's `XMLParser` over an
/// input stream), which also gives the line and column of a malformed document.
struct GPXReader: ImportReader {
    let context: ImportContext

    mutating func read(_ chunks: inout FileChunks, into draft: SessionDraft) throws -> ReadSummary {
        let stream = ImportFileStream(chunks.file)
        let parser = XMLParser(stream: stream)
        parser.shouldResolveExternalEntities = false
        let handler = GPXHandler(context: context, draft: draft)
        parser.delegate = handler
        let parsed = parser.parse()
        if let failure = stream.failure ?? handler.failure { throw failure }
        guard parsed else {
            let code = (parser.parserError as NSError?)?.code ?? 0
            throw ImportError(file: context.file, at: .text(line: parser.lineNumber, column: parser.columnNumber),
                              "not well-formed XML: " + (Self.libxml2Errors[code] ?? "libxml2 error \(code)"))
        }
        guard handler.sawRoot else { throw ImportError(file: context.file, "has no <gpx> element") }
        guard handler.points > 0 else { throw ImportError(file: context.file, "holds no track point (<trkpt>) to import") }
        try draft.flush()
        let device = DeviceRecord(id: handler.deviceID, device: DeviceDescription(name: handler.creator.map { "\($0) (GPX)" } ?? "GPX track"),
                                  firstSeen: draft.firstTimestamp ?? 0, lastSeen: draft.lastTimestamp ?? 0)
        if context.device == nil { try draft.addDevice(device) }
        return ReadSummary(device: device, name: handler.trackName)
    }

    /// What libxml2's commonest error codes mean (libxml/xmlerror.h): Foundation's parser passes on the
    /// code only, and its `XMLParser.ErrorCode` names do not match libxml2's numbers on Linux.
    private static let libxml2Errors: [Int: String] = [
        4: "the document is empty",
        5: "content after the end of the document, or an end tag that closes nothing",
        9: "a character XML does not allow",
        26: "an entity that is not declared",
        38: "'<' in an attribute value",
        39: "an attribute value without quotes",
        41: "an attribute without a value",
        42: "an attribute given twice",
        68: "a name expected after '<'",
        73: "'>' expected",
        74: "'</' expected",
        76: "an end tag that does not match its start tag",
        77: "an element not closed before the document ends",
    ]
}

/// The parser's delegate: keeps the element path and the point being read.
private final class GPXHandler: NSObject, XMLParserDelegate {
    let context: ImportContext
    let draft: SessionDraft
    var failure: ImportError?
    var sawRoot = false
    var creator: String?
    var trackName: String?
    var points = 0
    private var path: [String] = []
    private var text = ""
    private var track = 0
    private var segment = 0
    private var point: (latitude: Double, longitude: Double, fields: OrderedDictionary<String, PlistValue>, time: Double?, at: ImportError.Position)?
    private var lastTime = -Double.infinity

    init(context: ImportContext, draft: SessionDraft) {
        self.context = context
        self.draft = draft
    }

    var deviceID: String { context.device ?? "gpx" }

    private func fail(_ parser: XMLParser, _ reason: String, at position: ImportError.Position? = nil) {
        guard failure == nil else { return }
        failure = ImportError(file: context.file, at: position ?? .text(line: parser.lineNumber, column: parser.columnNumber), reason)
        parser.abortParsing()
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        let local = name.split(separator: ":").last.map(String.init) ?? name
        if path.isEmpty {
            guard local == "gpx" else { return fail(parser, "the document's root is <\(name)>, not <gpx>: not a GPX file") }
            if let version = attributes["version"], !["1.1", "1.0"].contains(version) {
                return fail(parser, "GPX version \(version); muEval reads GPX 1.1 (and 1.0)")
            }
            sawRoot = true
            creator = attributes["creator"]
        }
        path.append(local)
        text = ""
        switch local {
        case "trk":
            track += 1
            segment = 0
        case "trkseg":
            segment += 1
        case "trkpt":
            let at = ImportError.Position.text(line: parser.lineNumber, column: parser.columnNumber)
            guard let latText = attributes["lat"], let latitude = Double(latText), (-90...90).contains(latitude) else {
                return fail(parser, "a <trkpt> needs lat, a number from -90 to 90, found \(attributes["lat"].map { "\"\($0)\"" } ?? "none")", at: at)
            }
            guard let lonText = attributes["lon"], let longitude = Double(lonText), (-180...180).contains(longitude) else {
                return fail(parser, "a <trkpt> needs lon, a number from -180 to 180, found \(attributes["lon"].map { "\"\($0)\"" } ?? "none")", at: at)
            }
            point = (latitude, longitude, [:], nil, at)
        default:
            break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        text += string
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        let local = path.popLast() ?? name
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        text = ""
        let parent = path.last
        switch (local, parent) {
        case ("name", "trk"?) where trackName == nil:
            trackName = value
        case ("time", "trkpt"?):
            guard let time = ISO8601.parse(value) else { return fail(parser, "<time> \"\(value)\" is not an ISO 8601 date like 2014-07-05T12:03:22Z") }
            // A point's time is its event's timestamp: the same range (docs/PROTOCOL.md, "Value ranges").
            if let problem = ValueRanges.default.problem(time, as: .time, at: "<time> \(value)") { return fail(parser, problem.description) }
            point?.time = time
        case ("ele", "trkpt"?):
            guard let elevation = Double(value) else { return fail(parser, "<ele> \"\(value)\" is not a number of metres") }
            point?.fields["altitude"] = .real(elevation)
        case ("hdop", "trkpt"?):
            if let hdop = Double(value) { point?.fields["hdop"] = .real(hdop) }
        case ("trkpt", _):
            guard let point else { return }
            self.point = nil
            store(point, parser)
        default:
            break
        }
    }

    private func store(_ point: (latitude: Double, longitude: Double, fields: OrderedDictionary<String, PlistValue>, time: Double?, at: ImportError.Position),
                       _ parser: XMLParser) {
        guard let time = point.time else { return fail(parser, "a <trkpt> without <time>: it cannot be put on the session's clock", at: point.at) }
        if time < lastTime - context.limits.maxTimeRegression {
            return fail(parser, "time goes backwards: a point at \(time) after one at \(lastTime) (more than import.max-time-regression, \(context.limits.maxTimeRegression) s)", at: point.at)
        }
        lastTime = max(lastTime, time)
        var fields: OrderedDictionary<String, PlistValue> = [
            "class": .string(EventClass.deviceSensor.rawValue), "timestamp": .date(time), "sensor": .string("location"),
            "latitude": .real(point.latitude), "longitude": .real(point.longitude),
        ]
        fields.merge(point.fields) { kept, _ in kept }
        fields["track"] = .integer(Int64(track))
        fields["segment"] = .integer(Int64(segment))
        do {
            try draft.add(try WireEvent(fields: fields), device: deviceID, received: time)
            try draft.flushIfFull()
            points += 1
        } catch DraftLimit.tooManyEvents {
            fail(parser, "more points than import.max-events (\(context.limits.maxEvents)); raise it in muevald's configuration", at: point.at)
        } catch {
            fail(parser, "cannot be stored: \(error)", at: point.at)
        }
    }
}

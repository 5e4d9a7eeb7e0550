internal import MuEvalWire
internal import OrderedCollections

/// The key/value list of a control message (`<hello>`, `<welcome>`, `<ack>`, `<error>`), read by type.
/// Unknown keys are ignored, so either side can add fields.
struct ControlFields {
    let message: String
    let dict: OrderedDictionary<String, PlistValue>

    private func wrongType(_ key: String, _ expected: String) -> ParseFailure {
        ParseFailure(.invalidValue, "<\(message)> \"\(key)\" must be \(expected)")
    }

    func string(_ key: String) throws(ParseFailure) -> String? {
        switch dict[key] {
        case nil: return nil
        case .string(let value)?: return value
        default: throw wrongType(key, "a <string>")
        }
    }

    func integer(_ key: String) throws(ParseFailure) -> Int64? {
        switch dict[key] {
        case nil: return nil
        case .integer(let value)?: return value
        default: throw wrongType(key, "an <integer>")
        }
    }

    /// An `<integer>` or `<real>`.
    func number(_ key: String) throws(ParseFailure) -> Double? {
        switch dict[key] {
        case nil: return nil
        case .integer(let value)?: return Double(value)
        case .real(let value)?: return value
        default: throw wrongType(key, "an <integer> or <real>")
        }
    }

    /// A `<real>`, `<integer>` or `<date>`: a time in seconds since 1970.
    func time(_ key: String) throws(ParseFailure) -> Double? {
        switch dict[key] {
        case nil: return nil
        case .integer(let value)?: return Double(value)
        case .real(let value)?: return value
        case .date(let value)?: return value
        default: throw wrongType(key, "a <real>, <integer> or <date>")
        }
    }

    func data(_ key: String) throws(ParseFailure) -> [UInt8]? {
        switch dict[key] {
        case nil: return nil
        case .data(let value)?: return value
        default: throw wrongType(key, "<data>")
        }
    }

    func strings(_ key: String) throws(ParseFailure) -> [String]? {
        switch dict[key] {
        case nil: return nil
        case .array(let items)?:
            var strings: [String] = []
            for item in items {
                guard case .string(let value) = item else { throw wrongType(key, "an <array> of <string>") }
                strings.append(value)
            }
            return strings
        default: throw wrongType(key, "an <array> of <string>")
        }
    }

    func required<T>(_ key: String, _ read: (String) throws(ParseFailure) -> T?, _ expected: String)
        throws(ParseFailure) -> T
    {
        guard let value = try read(key) else {
            throw ParseFailure(.invalidValue, "<\(message)> needs \"\(key)\" (\(expected))")
        }
        return value
    }
}

extension DeviceHello {
    init(_ fields: ControlFields) throws(ParseFailure) {
        guard let deviceId = try fields.string("deviceId"), !deviceId.isEmpty else {
            throw ParseFailure(.missingDeviceId,
                "<hello> needs a non-empty \"deviceId\": add <key>deviceId</key><string>…</string>")
        }
        self.init(deviceId: deviceId,
                  protocolVersion: try fields.integer("protocolVersion"),
                  device: DeviceDescription(name: try fields.string("deviceName"),
                                            model: try fields.string("model"),
                                            systemVersion: try fields.string("systemVersion"),
                                            appId: try fields.string("appId"),
                                            appVersion: try fields.string("appVersion"),
                                            screenWidth: try fields.number("screenWidth"),
                                            screenHeight: try fields.number("screenHeight"),
                                            screenScale: try fields.number("screenScale")),
                  token: try fields.string("token"),
                  pairing: try fields.string("pairing"),
                  invitation: try fields.string("invitation"))
    }
}

extension WireMedia {
    init(_ fields: ControlFields, maxBytes: Int, ranges: ValueRanges) throws(ParseFailure) {
        let contentType = try fields.required("contentType", fields.string, "a <string> such as audio/wav")
        guard let format = MediaFormat(contentType: contentType) else {
            throw ParseFailure(.unsupportedMedia, "content type \"\(contentType)\" is not supported; send "
                + MediaFormat.allCases.map(\.rawValue).joined(separator: ", "))
        }
        if let kind = try fields.string("kind"), kind != format.kind.rawValue {
            throw ParseFailure(.unsupportedMedia, "kind \"\(kind)\" does not match \(format.rawValue), which is \(format.kind.rawValue)")
        }
        let stream = try fields.required("stream", fields.string, "a <string> naming the stream")
        guard !stream.isEmpty, stream.utf8.count <= 128 else {
            throw ParseFailure(.invalidValue, "<media> \"stream\" must be 1 to 128 bytes long")
        }
        let part = try fields.required("part", fields.integer, "an <integer>, the chunk's number from 0")
        guard part >= 0 else { throw ParseFailure(.invalidValue, "<media> \"part\" must be 0 or more") }
        let start = try fields.required("start", fields.time, "the device time of the chunk's first sample")
        let duration = try fields.number("duration")
        guard start.isFinite, duration.map({ $0.isFinite && $0 >= 0 }) ?? true else {
            throw ParseFailure(.invalidValue, "<media> \"start\" and \"duration\" must be finite, \"duration\" not negative")
        }
        let bytes = try fields.required("data", fields.data, "the chunk's bytes")
        guard bytes.count <= maxBytes else {
            throw ParseFailure(.messageTooLarge, "the media chunk has \(bytes.count) bytes, more than the \(maxBytes) allowed; send smaller chunks")
        }
        self.init(stream: stream, format: format, part: part, start: start, duration: duration,
                  seq: try fields.integer("seq"), bytes: bytes)
        if let problem = ranges.problem(in: self) { throw ParseFailure(.invalidValue, "<media> " + problem.description) }
    }
}

extension Welcome {
    init(_ fields: ControlFields) throws(ParseFailure) {
        guard let tasks = WelcomeTask.list(fields.dict["tasks"]) else {
            throw ParseFailure(.invalidValue, "<welcome> \"tasks\" must be an <array> of <dict> with \"name\" (a <string>), "
                + "\"order\" (an <integer>) and, optionally, \"instructions\" (a <string>) and \"timeLimit\" (seconds, a <real>)")
        }
        self.init(sessionId: try fields.required("session", fields.string, "a <string>"),
                  sensors: try fields.strings("sensors") ?? [], tasks: tasks,
                  questionnaire: try fields.string("questionnaire"))
    }
}

extension WireReplyError {
    init(_ fields: ControlFields) throws(ParseFailure) {
        self.init(reason: try fields.required("reason", fields.string, "a <string>"), seq: try fields.integer("seq"),
                  fromSeq: try fields.integer("fromSeq"))
    }
}

func ackSeq(_ fields: ControlFields) throws(ParseFailure) -> Int64 {
    try fields.required("seq", fields.integer, "an <integer>")
}

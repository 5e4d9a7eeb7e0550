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
                  deviceName: try fields.string("deviceName"),
                  model: try fields.string("model"),
                  systemVersion: try fields.string("systemVersion"),
                  appId: try fields.string("appId"),
                  appVersion: try fields.string("appVersion"),
                  screenWidth: try fields.number("screenWidth"),
                  screenHeight: try fields.number("screenHeight"),
                  screenScale: try fields.number("screenScale"),
                  token: try fields.string("token"))
    }
}

extension Welcome {
    init(_ fields: ControlFields) throws(ParseFailure) {
        self.init(sessionId: try fields.required("session", fields.string, "a <string>"),
                  sensors: try fields.strings("sensors") ?? [])
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

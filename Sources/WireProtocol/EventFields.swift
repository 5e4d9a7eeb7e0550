/// The event keys the server indexes, picked out of the top-level dict while its typed JSON is written.
struct EventFields {
    enum Field {
        case eventClass, timestamp, seq, sensor

        init?(key: UnsafeBufferPointer<UInt8>) {
            switch key.count {
            case 3 where bytesEqual(key, "seq"): self = .seq
            case 5 where bytesEqual(key, "class"): self = .eventClass
            case 6 where bytesEqual(key, "sensor"): self = .sensor
            case 9 where bytesEqual(key, "timestamp"): self = .timestamp
            default: return nil
            }
        }
    }

    var eventClass: String?
    var timestamp: Double?
    var seq: Int64?
    var sensor: String?
    /// The first field of the wrong type; reported once the message is read, so `seq` can go with it.
    var problem: ParseFailure?

    mutating func capture(_ field: Field, string utf8: UnsafeBufferPointer<UInt8>) {
        switch field {
        case .eventClass: eventClass = String(decoding: utf8, as: UTF8.self)
        case .sensor: sensor = String(decoding: utf8, as: UTF8.self)
        case .timestamp, .seq: wrongType(field, found: "string")
        }
    }

    mutating func capture(_ field: Field, integer value: Int64) {
        switch field {
        case .seq: seq = value
        case .timestamp: timestamp = Double(value)
        case .eventClass: wrongType(field, found: "integer")
        case .sensor: break
        }
    }

    mutating func capture(_ field: Field, real value: Double) {
        switch field {
        case .timestamp where value.isFinite: timestamp = value
        case .timestamp, .eventClass, .seq: wrongType(field, found: value.isFinite ? "real" : "non-finite real")
        case .sensor: break
        }
    }

    mutating func capture(_ field: Field, date value: Double) {
        switch field {
        case .timestamp: timestamp = value
        case .eventClass, .seq: wrongType(field, found: "date")
        case .sensor: break
        }
    }

    /// Any other value type (`true`, `data`, `array`, `dict`).
    mutating func capture(_ field: Field, other element: String) {
        if field != .sensor { wrongType(field, found: element) }
    }

    private mutating func wrongType(_ field: Field, found: String) {
        guard problem == nil else { return }
        let expected = switch field {
        case .eventClass: "\"class\" must be a <string>"
        case .timestamp: "\"timestamp\" must be a <date> or a <real> or <integer> of seconds since 1970"
        case .seq: "\"seq\" must be an <integer>"
        case .sensor: "\"sensor\" must be a <string>"
        }
        problem = ParseFailure(.invalidValue, "\(expected), found a \(found)")
    }
}

import OrderedCollections

/// A refused upgrade as web_phones.py counts it: the status, the body and the Retry-After (seconds, or nil).
struct Refusal: Hashable {
    var status: Int
    var body: String
    var retryAfter: Double?
}

/// What one phone measured, its share of web_phones.py's `Run`: merged over the phones at the end, so that no
/// phone writes to another's arrays.
struct Measurements {
    var during: [Double] = []   // send→ack seconds of acks heard while their phone still sent
    var after: [Double] = []    // ...and of those heard after it stopped (the drain)
    var late: [Double] = []     // how late each 100 ms batch was made: the client's own lag
    var refusals: OrderedDictionary<Refusal, Int> = [:]
    var errors: OrderedDictionary<String, Int> = [:]
    var failures: OrderedDictionary<String, Int> = [:]  // connections that failed before an answer

    mutating func merge(_ other: Measurements) {
        during += other.during
        after += other.after
        late += other.late
        for (key, count) in other.refusals { refusals[key, default: 0] += count }
        for (key, count) in other.errors { errors[key, default: 0] += count }
        for (key, count) in other.failures { failures[key, default: 0] += count }
    }
}

/// web_phones.py's summary: the same keys in the same order, so that Benchmarks/phones_at_once.py reports
/// either client's alike.
struct Summary {
    var options: Options
    var phones: [Phone]
    var cpuSeconds: Double
    var wallSeconds: Double

    var json: JSON {
        var all = Measurements()
        for phone in phones { all.merge(phone.measured) }
        let perPhone = phones.map { $0.summary(firstSeq: options.firstSeq) }
        func total(_ key: KeyPath<Phone, Int>) -> JSON { .int(phones.reduce(0) { $0 + $1[keyPath: key] }) }
        return .object([
            ("phones", .int(phones.count)), ("rate", .double(options.rate)), ("seconds", .double(options.seconds)),
            ("drop", .string(options.drop)), ("made", total(\.made)), ("acked", total(\.acked)),
            ("refused", total(\.refused)), ("unacked", .int(phones.reduce(0) { $0 + $1.made - $1.acked - $1.refused })),
            ("resent", total(\.resent)), ("reconnects", .int(phones.reduce(0) { $0 + max(0, $1.connections - 1) })),
            ("latency_while_sending", Self.percentiles(all.during)), ("latency_after_sending", Self.percentiles(all.after)),
            ("latency", Self.percentiles(all.during + all.after)), ("batch_lateness", Self.percentiles(all.late)),
            ("refusals", .array(Self.mostCommon(all.refusals).map { refusal, count in
                .object([("status", .int(refusal.status)), ("body", .string(refusal.body)),
                         ("retry_after", refusal.retryAfter.map(JSON.double) ?? .null), ("count", .int(count))])
            })),
            ("errors", .object(Self.mostCommon(all.errors).prefix(20).map { ($0.0, JSON.int($0.1)) })),
            ("failures", .object(all.failures.map { ($0.key, JSON.int($0.value)) })),
            ("client_cpu_seconds", .double(Self.round(cpuSeconds, 2))), ("wall_seconds", .double(Self.round(wallSeconds, 1))),
            ("per_phone", .array(perPhone)),
        ])
    }

    /// web_phones.py's `percentiles`: count, p50, p99 and max in milliseconds (0.1 ms).
    static func percentiles(_ values: [Double]) -> JSON {
        guard !values.isEmpty else { return .object([("count", .int(0))]) }
        let ordered = values.sorted()
        func pick(_ share: Double) -> JSON {
            .double(round(ordered[min(ordered.count - 1, Int(share * Double(ordered.count)))] * 1000, 1))
        }
        return .object([("count", .int(ordered.count)), ("p50_ms", pick(0.5)), ("p99_ms", pick(0.99)),
                        ("max_ms", .double(round(ordered[ordered.count - 1] * 1000, 1)))])
    }

    /// Counter.most_common: by count, the first seen first among equals.
    static func mostCommon<Key>(_ counts: OrderedDictionary<Key, Int>) -> [(Key, Int)] {
        counts.enumerated().sorted { ($0.element.value, -$0.offset) > ($1.element.value, -$1.offset) }
            .map { ($0.element.key, $0.element.value) }
    }

    static func round(_ value: Double, _ digits: Int) -> Double {
        let scale = digits == 1 ? 10.0 : 100.0
        return (value * scale).rounded(.toNearestOrEven) / scale
    }
}

/// A JSON value written as Python's json.dumps(indent=1) writes it: floats in their shortest form with a
/// point (Swift's `description` is Python's repr), non-ASCII escaped.
indirect enum JSON {
    case int(Int)
    case double(Double)
    case string(String)
    case null
    case array([JSON])
    case object([(String, JSON)])

    func write(into out: inout String, level: Int = 0) {
        let inner = "\n" + String(repeating: " ", count: level + 1)
        switch self {
        case .int(let value): out += String(value)
        case .double(let value): out += value.isFinite ? value.description : (value.isNaN ? "NaN" : value > 0 ? "Infinity" : "-Infinity")
        case .string(let text): Self.quote(text, into: &out)
        case .null: out += "null"
        case .array(let items) where items.isEmpty: out += "[]"
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                out += (index == 0 ? "" : ",") + inner
                item.write(into: &out, level: level + 1)
            }
            out += "\n" + String(repeating: " ", count: level) + "]"
        case .object(let pairs) where pairs.isEmpty: out += "{}"
        case .object(let pairs):
            out += "{"
            for (index, (key, value)) in pairs.enumerated() {
                out += (index == 0 ? "" : ",") + inner
                Self.quote(key, into: &out)
                out += ": "
                value.write(into: &out, level: level + 1)
            }
            out += "\n" + String(repeating: " ", count: level) + "}"
        }
    }

    private static func quote(_ text: String, into out: inout String) {
        out += "\""
        for unit in text.utf16 {
            switch unit {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x08: out += "\\b"
            case 0x0C: out += "\\f"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default:
                let hex = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        out += "\""
    }
}

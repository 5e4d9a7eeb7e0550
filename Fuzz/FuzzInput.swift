// Turns a fuzzer's bytes into values, the way libFuzzer's FuzzedDataProvider does: every input is valid, the
// bytes only choose. Values come from small tables of what sessions hold (classes, keys, words) and of
// absurd numbers (NaN, ±inf, 1e300, 10¹⁸ s, Int64.max), or raw from the input, so that short inputs reach
// both the usual paths and the edges. `SeedWriter` is its inverse, for seeds made from real sessions.

internal import MuEvalWire
internal import OrderedCollections
internal import WireProtocol

enum FuzzTables {
    static let classes: [String] = EventClass.allCases.map(\.rawValue) + [ObserverNote.eventClass]
    static let keys: [String] = [
        "type", "phase", "x", "y", "tapCount", "view", "target", "className", "id", "title", "frame", "width", "height",
        "subviews", "placeholder", "viewStack", "uiState", "screenshot", "transition", "gesture", "recognized", "path",
        "event", "action", "sender", "name", "marker", "call", "sensor", "z", "text", "kind", "source", "task", "outcome",
        "comment", "t", "viewName", "viewController", "touchPhase", "state", "stack", "reason", "latitude", "longitude",
        "duration", "start", "end", "value", "scale",
    ]
    static let words: [String] = [
        "", "touch", "began", "moved", "ended", "cancelled", "gesture", "swipe", "tap", "pinch", "action", "text",
        "viewDidAppear", "viewWillDisappear", "didSelectRow", "push", "pop", "modal", "background", "foreground",
        "View1Controller", "View2Controller", "View3Controller", "UIButton", "UITextField", "UILabel", "UIView",
        "accelerometer", "location", "begin", "end", "outcome", "success", "failure", "abandoned", "assisted", "note",
        "problem", "quote", "task-done", "Write a post", "Publish", "microphone", "faceCamera", "touchUpInside",
        "buttonPressed:", "start", "done", "observer", "console", "P01", "P02",
    ]
    static let doubles: [Double] = [
        0, -0.0, 0.1, 0.5, 1, -1, 2, 10, 100, 160, 320, 480, 1024, 3600, 86_400, 1_298_000_000, 1e9, 1e12, 1e18, -1e18,
        9.3e18, -9.3e18, 1e300, -1e300, .nan, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        .leastNonzeroMagnitude, 1e-300, 2_147_483_648, 4_294_967_296, 9_007_199_254_740_992, -0.5,
    ]
    static let integers: [Int64] = [
        0, 1, -1, 2, 3, 10, .max, .min, .max - 1, .min + 1, Int64(Int32.max), Int64(Int32.min), Int64(UInt32.max),
        1 << 53, -(1 << 53), 1 << 32, 44_100, 16_000,
    ]
}

struct FuzzInput {
    private let bytes: [UInt8]
    private var position = 0
    /// The last time handed out by `time()`, so that most events follow each other as in a session.
    private var clock = 1_298_000_000.0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isEmpty: Bool { position >= bytes.count }

    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, position + count)
        defer { position = end }
        return Array(bytes[position..<end])
    }

    mutating func below(_ count: Int) -> Int { Int(byte()) % count }

    mutating func bool() -> Bool { byte() & 1 == 1 }

    mutating func raw64() -> UInt64 { bytes(8).reversed().reduce(0) { $0 << 8 | UInt64($1) } }

    /// From the table, raw (255), or a small whole number.
    mutating func double() -> Double {
        let choice = Int(byte())
        if choice < FuzzTables.doubles.count { return FuzzTables.doubles[choice] }
        if choice == 255 { return Double(bitPattern: raw64()) }
        return Double(choice - FuzzTables.doubles.count)
    }

    mutating func integer() -> Int64 {
        let choice = Int(byte())
        if choice < FuzzTables.integers.count { return FuzzTables.integers[choice] }
        if choice == 255 { return Int64(bitPattern: raw64()) }
        return Int64(choice - FuzzTables.integers.count)
    }

    /// Mostly a little after the last time (as a session goes on); else any double.
    mutating func time() -> Double {
        let step = byte()
        if step < 128 {
            clock += Double(step) / 8
            return clock
        }
        return double()
    }

    /// A word of the table, or up to 200 bytes of the input (any bytes, decoded as UTF-8 with repairs).
    mutating func string(_ table: [String] = FuzzTables.words) -> String {
        let choice = Int(byte())
        if choice < table.count { return table[choice] }
        return String(decoding: bytes(choice - table.count), as: UTF8.self)
    }

    mutating func value(depth: Int = 4) -> PlistValue {
        switch below(depth > 0 ? 9 : 6) {
        case 0: .string(string())
        case 1: .integer(integer())
        case 2: .real(double())
        case 3: .bool(bool())
        case 4: .date(double())
        case 5: .data(bytes(Int(byte())))
        case 6: .array((0..<below(8)).map { _ in value(depth: depth - 1) })
        case 7: .dict(dict(depth: depth - 1))
        default: .dict(["x": .real(double()), "y": .real(double()), "width": .real(double()), "height": .real(double())])
        }
    }

    mutating func dict(depth: Int = 4) -> OrderedDictionary<String, PlistValue> {
        var fields: OrderedDictionary<String, PlistValue> = [:]
        for _ in 0..<below(12) { fields[string(FuzzTables.keys)] = value(depth: depth) }
        return fields
    }
}

/// Writes what `FuzzInput` reads back as the same values: real sessions become seeds.
struct SeedWriter {
    var bytes: [UInt8] = []

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func raw64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func double(_ value: Double) {
        byte(255)
        raw64(value.bitPattern)
    }

    mutating func integer(_ value: Int64) {
        byte(255)
        raw64(UInt64(bitPattern: value))
    }

    /// A known word, else the text (cut to what one length byte holds).
    mutating func string(_ text: String, _ table: [String] = FuzzTables.words) {
        if let index = table.firstIndex(of: text) { return byte(UInt8(index)) }
        let utf8 = Array(text.utf8.prefix(255 - table.count))
        byte(UInt8(table.count + utf8.count))
        bytes += utf8
    }

    mutating func value(_ value: PlistValue, depth: Int = 4) {
        switch value {
        case .string(let text): byte(0); string(text)
        case .integer(let number): byte(1); integer(number)
        case .real(let number): byte(2); double(number)
        case .bool(let flag): byte(3); byte(flag ? 1 : 0)
        case .date(let time): byte(4); double(time)
        case .data(let data):
            let kept = data.prefix(255)
            byte(5); byte(UInt8(kept.count)); bytes += kept
        case .array(let items) where depth > 0:
            byte(6); byte(UInt8(min(items.count, 7)))
            for item in items.prefix(7) { self.value(item, depth: depth - 1) }
        case .dict(let fields) where depth > 0:
            byte(7); dict(fields, depth: depth - 1)
        case .array, .dict:
            byte(0); string("")
        }
    }

    mutating func dict(_ fields: OrderedDictionary<String, PlistValue>, depth: Int = 4) {
        byte(UInt8(min(fields.count, 11)))
        for (key, value) in fields.prefix(11) {
            string(key, FuzzTables.keys)
            self.value(value, depth: depth)
        }
    }
}

public import OrderedCollections

/// A message in the compact key/value form `WireEncoder` writes, `<name><key>…</key>value…</name>` or
/// `<name/>`: a server's replies, and the library's own messages read back from its spool.
public struct KeyValueMessage: Sendable, Equatable {
    public var name: String
    public var fields: OrderedDictionary<String, PlistValue>

    public init(name: String, fields: OrderedDictionary<String, PlistValue> = [:]) {
        self.name = name
        self.fields = fields
    }

    /// The message `bytes` hold in full (whitespace around it is fine); nil when they hold anything else.
    public init?(_ bytes: [UInt8]) {
        var cursor = KeyValueCursor(bytes[...])
        guard let message = cursor.message(), cursor.atEnd else { return nil }
        self = message
    }
}

/// Reads the compact form over bytes that hold one whole message; every method returns nil on anything
/// the encoder would not have written (with whitespace between elements allowed).
struct KeyValueCursor {
    private let bytes: ArraySlice<UInt8>
    private var index: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        index = bytes.startIndex
    }

    var atEnd: Bool {
        mutating get {
            skipWhitespace()
            return index == bytes.endIndex
        }
    }

    mutating func message() -> KeyValueMessage? {
        skipWhitespace()
        guard take("<"), let name = name() else { return nil }
        if take("/>") { return KeyValueMessage(name: name) }
        guard take(">"), let fields = pairs(until: "</" + name + ">") else { return nil }
        return KeyValueMessage(name: name, fields: fields)
    }

    private mutating func pairs(until end: String) -> OrderedDictionary<String, PlistValue>? {
        var fields: OrderedDictionary<String, PlistValue> = [:]
        while true {
            skipWhitespace()
            if take(end) { return fields }
            guard take("<key>"), let key = text(until: "</key>"), let value = value() else { return nil }
            fields[key] = value
        }
    }

    private mutating func value() -> PlistValue? {
        skipWhitespace()
        if take("<string>") { return text(until: "</string>").map(PlistValue.string) }
        if take("<string/>") { return .string("") }
        if take("<integer>") { return text(until: "</integer>").flatMap { Int64($0) }.map(PlistValue.integer) }
        if take("<real>") { return text(until: "</real>").flatMap { Double($0) }.map(PlistValue.real) }
        if take("<true/>") { return .bool(true) }
        if take("<false/>") { return .bool(false) }
        if take("<date>") { return text(until: "</date>").flatMap { ISO8601.parse($0) }.map(PlistValue.date) }
        if take("<data>") {
            guard let end = find("</data>") else { return nil }
            let decoded = Array(bytes[index..<end]).withUnsafeBufferPointer { Base64.decode($0) }
            index = end + "</data>".utf8.count
            return decoded.map(PlistValue.data)
        }
        if take("<data/>") { return .data([]) }
        if take("<array/>") { return .array([]) }
        if take("<array>") {
            var items: [PlistValue] = []
            while true {
                skipWhitespace()
                if take("</array>") { return .array(items) }
                guard let item = value() else { return nil }
                items.append(item)
            }
        }
        if take("<dict/>") { return .dict([:]) }
        if take("<dict>") { return pairs(until: "</dict>").map(PlistValue.dict) }
        return nil
    }

    /// A message name: ASCII letters, as every message of the protocol is named.
    private mutating func name() -> String? {
        let start = index
        while index < bytes.endIndex, (0x61...0x7A).contains(bytes[index] | 0x20) { index += 1 }
        return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
    }

    /// Character data up to `end` (which it consumes), with the references the encoder writes resolved.
    private mutating func text(until end: String) -> String? {
        guard let stop = find(end) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(stop - index)
        while index < stop {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "&") else {
                if byte == UInt8(ascii: "<") { return nil }
                out.append(byte)
                index += 1
                continue
            }
            guard let semicolon = bytes[index..<stop].firstIndex(of: UInt8(ascii: ";")),
                  let character = Self.reference(String(decoding: bytes[(index + 1)..<semicolon], as: UTF8.self))
            else { return nil }
            out.append(contentsOf: String(character).utf8)
            index = semicolon + 1
        }
        index = stop + end.utf8.count
        return String(decoding: out, as: UTF8.self)
    }

    /// `lt`, `gt`, `amp`, `quot`, `apos`, `#N` or `#xN`.
    private static func reference(_ name: String) -> Character? {
        switch name {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "quot": return "\""
        case "apos": return "'"
        default:
            let number = name.hasPrefix("#x") ? UInt32(name.dropFirst(2), radix: 16)
                : name.hasPrefix("#") ? UInt32(name.dropFirst(), radix: 10) : nil
            return number.flatMap(Unicode.Scalar.init).map(Character.init)
        }
    }

    private mutating func skipWhitespace() {
        while index < bytes.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    /// Consumes `literal` when the bytes go on with it.
    private mutating func take(_ literal: String) -> Bool {
        let utf8 = literal.utf8
        guard bytes[index...].starts(with: utf8) else { return false }
        index += utf8.count
        return true
    }

    private func find(_ literal: String) -> Int? {
        bytes[index...].firstRange(of: Array(literal.utf8))?.lowerBound
    }
}

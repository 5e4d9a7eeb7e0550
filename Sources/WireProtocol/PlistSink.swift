internal import MuEvalWire
internal import OrderedCollections

/// Receives property list values in document order as the parser reads them. The parser is generic over it so
/// events go straight to typed JSON (`TypedJSONWriter`) and the rare other messages to a tree (`PlistTreeBuilder`).
/// Byte arguments are valid UTF-8 and only valid during the call.
protocol PlistSink {
    mutating func beginDict()
    mutating func key(_ utf8: UnsafeBufferPointer<UInt8>)
    mutating func endDict()
    mutating func beginArray()
    mutating func endArray()
    mutating func string(_ utf8: UnsafeBufferPointer<UInt8>)
    mutating func integer(_ value: Int64)
    mutating func real(_ value: Double)
    mutating func bool(_ value: Bool)
    mutating func date(_ secondsSince1970: Double)
    mutating func data(_ bytes: [UInt8])
}

/// Builds a `PlistValue` tree from sink calls.
struct PlistTreeBuilder: PlistSink {
    private enum Container {
        case dict(OrderedDictionary<String, PlistValue>, key: String)
        case array([PlistValue])
    }

    private var stack: [Container] = []
    /// The finished top-level value.
    private(set) var value: PlistValue?

    private mutating func put(_ v: PlistValue) {
        switch stack.popLast() {
        case nil:
            value = v
        case .dict(var dict, let key):
            dict[key] = v
            stack.append(.dict(dict, key: ""))
        case .array(var array):
            array.append(v)
            stack.append(.array(array))
        }
    }

    mutating func beginDict() { stack.append(.dict([:], key: "")) }

    mutating func key(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard case .dict(let dict, _)? = stack.popLast() else { return }
        stack.append(.dict(dict, key: String(decoding: utf8, as: UTF8.self)))
    }

    mutating func endDict() {
        guard case .dict(let dict, _)? = stack.popLast() else { return }
        put(.dict(dict))
    }

    mutating func beginArray() { stack.append(.array([])) }

    mutating func endArray() {
        guard case .array(let array)? = stack.popLast() else { return }
        put(.array(array))
    }

    mutating func string(_ utf8: UnsafeBufferPointer<UInt8>) { put(.string(String(decoding: utf8, as: UTF8.self))) }
    mutating func integer(_ value: Int64) { put(.integer(value)) }
    mutating func real(_ value: Double) { put(.real(value)) }
    mutating func bool(_ value: Bool) { put(.bool(value)) }
    mutating func date(_ secondsSince1970: Double) { put(.date(secondsSince1970)) }
    mutating func data(_ bytes: [UInt8]) { put(.data(bytes)) }
}

extension PlistValue {
    /// Replays the tree into a sink, the inverse of `PlistTreeBuilder`.
    func emit<S: PlistSink>(into sink: inout S) {
        switch self {
        case .string(var s): s.withUTF8 { sink.string($0) }
        case .integer(let v): sink.integer(v)
        case .real(let v): sink.real(v)
        case .bool(let v): sink.bool(v)
        case .date(let v): sink.date(v)
        case .data(let v): sink.data(v)
        case .array(let items):
            sink.beginArray()
            for item in items { item.emit(into: &sink) }
            sink.endArray()
        case .dict(let dict):
            sink.beginDict()
            for (key, item) in dict {
                var key = key
                key.withUTF8 { sink.key($0) }
                item.emit(into: &sink)
            }
            sink.endDict()
        }
    }
}

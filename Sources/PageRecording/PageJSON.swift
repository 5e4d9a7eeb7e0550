internal import Foundation
internal import WireProtocol

/// A JSON value of a page record, as read from a device (untrusted) and written back after sanitising.
///
/// Read with Foundation's JSONSerialization: page records use `null`, which the project's own reader (PlainJSON, for
/// property list values) refuses, and they are read once per record, not per event on the hot path.
enum PageJSON: Equatable {
    case null
    case number(Double)
    case string(String)
    case array([PageJSON])
    case object([String: PageJSON])

    /// The value of `bytes`, or nil when they are no JSON (or nested deeper than Foundation reads).
    static func parse(_ bytes: some Collection<UInt8>) -> PageJSON? {
        guard let any = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) else { return nil }
        return PageJSON(any: any)
    }

    private init?(any: Any) {
        switch any {
        case is NSNull: self = .null
        case let string as String: self = .string(string)
        case let number as NSNumber:
            // JSONSerialization gives booleans as NSNumber too: the page format has none, so `true` reads as 1.
            self = .number(number.doubleValue)
        case let array as [Any]:
            var values: [PageJSON] = []
            values.reserveCapacity(array.count)
            for element in array {
                guard let value = PageJSON(any: element) else { return nil }
                values.append(value)
            }
            self = .array(values)
        case let object as [String: Any]:
            var values: [String: PageJSON] = [:]
            values.reserveCapacity(object.count)
            for (key, element) in object {
                guard let value = PageJSON(any: element) else { return nil }
                values[key] = value
            }
            self = .object(values)
        default: return nil
        }
    }

    subscript(key: String) -> PageJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var array: [PageJSON]? {
        if case .array(let values) = self { return values }
        return nil
    }

    /// A finite number, clamped to ±`limit`: a device's 1e300 is a size no page has.
    func number(limit: Double = 1e7) -> Double? {
        guard case .number(let value) = self, value.isFinite else { return nil }
        return min(max(value, -limit), limit)
    }

    /// A node id or record number: a whole number from 0 to 2^53 (what JavaScript counts exactly).
    var id: Int64? {
        guard case .number(let value) = self, value.isFinite, value >= 0, value <= 9_007_199_254_740_992,
              value == value.rounded(.towardZero) else { return nil }
        return Int64(value)
    }

    /// The value as JSON text, keys sorted (so that the same record is always the same bytes).
    func write(to out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .number(let value): JSONObject.number(value, to: &out)
        case .string(let text): JSONString.append(text, to: &out)
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (index, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                JSONString.append(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    var bytes: [UInt8] {
        var out: [UInt8] = []
        write(to: &out)
        return out
    }
}

internal import Foundation
internal import WireProtocol

/// What a browser sends, read totally: a query's numbers, and a body's times and durations, are checked
/// here, at the edge. A value that is not a number, or outside its range, is a 400 that names the
/// parameter and its range; nothing further in ever sees it (docs/CONSOLE.md, "Input").
enum ConsoleInput {
    /// A whole number from a query string; nil when absent or empty. `1e3`, `NaN`, `-0x1`, digits
    /// beyond the type's range and anything outside `range` are refused.
    static func integer<T: FixedWidthInteger>(_ text: String?, name: String, in range: ClosedRange<T>) throws(ConsoleError) -> T? {
        guard let text, !text.isEmpty else { return nil }
        guard let value = T(text), range.contains(value) else {
            throw .badRequest("\(name) must be \(describe(range)), not \(quoted(text))")
        }
        return value
    }

    /// A device time from a body (a note's `t`, a task mark's `at`), within the times muevald stores.
    static func time(_ value: Double?, field: String) throws(ConsoleError) -> Double? {
        try checked(value, as: .time, field: field)
    }

    /// A value of `quantity` from a body, within its range (`ValueRanges`, docs/PROTOCOL.md); nil stays nil.
    static func checked(_ value: Double?, as quantity: ValueRangeProblem.Quantity, field: String) throws(ConsoleError) -> Double? {
        guard let value else { return nil }
        if let problem = ValueRanges.default.problem(value, as: quantity, at: field) { throw .badRequest(problem.description) }
        return value
    }

    /// Why `body` is not the JSON a call takes, naming the field (`responses.sus[0].items[3]`) where
    /// the decoder says it.
    static func describe(_ error: any Error, body: Data) -> String {
        let prefix = "the request body is not the JSON this call takes"
        guard let error = error as? DecodingError else { return "\(prefix): \(error)" }
        // Foundation's decoder says a number that does not fit its field (1e300 for a count, 1.5 for
        // an id) is "not valid JSON", naming no field: say what is wrong instead.
        if case .dataCorrupted(let context) = error, context.codingPath.isEmpty, (try? JSONSerialization.jsonObject(with: body)) != nil {
            return "\(prefix): a number in it does not fit its field (a count, number or id is a whole number within 64 bits)"
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "\(prefix): \(path(context.codingPath)) must be \(expected(type))"
        case .valueNotFound(let type, let context):
            return "\(prefix): \(path(context.codingPath)) must be \(expected(type)), not null"
        case .keyNotFound(let key, let context):
            return "\(prefix): \(path(context.codingPath + [key])) is missing"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty
                ? "\(prefix): \(context.debugDescription)"
                : "\(prefix): \(path(context.codingPath)): \(context.debugDescription)"
        @unknown default:
            return "\(prefix): \(error)"
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        var text = ""
        for key in keys {
            if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
        }
        return "`\(text)`"
    }

    private static func expected(_ type: Any.Type) -> String {
        switch type {
        case is any BinaryInteger.Type: "a whole number that fits 64 bits"
        case is any BinaryFloatingPoint.Type: "a finite number"
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        default: "\(type)"
        }
    }

    private static func describe<T: FixedWidthInteger>(_ range: ClosedRange<T>) -> String {
        range.upperBound == .max ? "a whole number of at least \(range.lowerBound)" : "a whole number from \(range.lowerBound) to \(range.upperBound)"
    }

    /// The value as the error quotes it: short, whatever was sent.
    private static func quoted(_ text: String) -> String {
        "\"" + text.prefix(32) + (text.count > 32 ? "…" : "") + "\""
    }
}

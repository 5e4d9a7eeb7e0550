internal import MuEvalWire
internal import WireProtocol

/// Whether a number read from a session file can be used: a value outside its range (`ValueRanges`,
/// docs/PROTOCOL.md) is missing (docs/REPORTS.md, "Absurd numbers"). Files recorded before the wire
/// checked values at the edge, and imported ones, may hold NaN, infinities and times 10¹⁸ s away;
/// analysis asks here, once per value.
enum Plausible {
    static let ranges = ValueRanges.default

    /// A device time (seconds since 1970), or nil.
    static func time(_ value: Double) -> Double? {
        ranges.time(value)
    }

    /// A screen coordinate or frame origin in points, or nil.
    static func coordinate(_ value: Double) -> Double? {
        ranges.coordinate(value)
    }

    /// A width or height in points, or nil.
    static func length(_ value: Double) -> Double? {
        ranges.size(value)
    }

    /// A duration in seconds, or nil.
    static func duration(_ value: Double) -> Double? {
        ranges.duration(value)
    }

    /// `value` without its non-finite numbers (a dictionary loses the key, an array the element), so that
    /// an interpreter reading a field finds it missing; nil when it has none (the common case: no copy).
    static func payload(_ value: PlistValue) -> PlistValue? {
        switch value {
        case .array(let items):
            guard items.contains(where: { isAbsurd($0) || payload($0) != nil }) else { return nil }
            return .array(items.compactMap { isAbsurd($0) ? nil : payload($0) ?? $0 })
        case .dict(let entries):
            guard entries.values.contains(where: { isAbsurd($0) || payload($0) != nil }) else { return nil }
            var kept = entries
            for (key, item) in entries {
                if isAbsurd(item) {
                    kept.removeValue(forKey: key)
                } else if let cleaned = payload(item) {
                    kept[key] = cleaned
                }
            }
            return .dict(kept)
        default:
            return nil
        }
    }

    private static func isAbsurd(_ value: PlistValue) -> Bool {
        switch value {
        case .real(let number), .date(let number): !number.isFinite
        default: false
        }
    }
}

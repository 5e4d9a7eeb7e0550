/// Signed 64-bit decimal with an optional sign; nil on anything else or on overflow.
func parseInteger(_ p: UnsafeBufferPointer<UInt8>) -> Int64? {
    var i = 0
    var negative = false
    if let first = p.first, first == ASCII.minus || first == ASCII.plus {
        negative = first == ASCII.minus
        i = 1
    }
    guard i < p.count else { return nil }
    // Accumulate negatively so Int64.min parses.
    var value: Int64 = 0
    while i < p.count {
        let b = p[i]
        guard isDigit(b) else { return nil }
        let (times10, o1) = value.multipliedReportingOverflow(by: 10)
        let (next, o2) = times10.subtractingReportingOverflow(Int64(b &- ASCII.zero))
        guard !o1, !o2 else { return nil }
        value = next
        i += 1
    }
    if negative { return value }
    return value == .min ? nil : -value
}

/// A decimal real (`1`, `-2.5`, `.5`, `6.02e23`), or `nan`/`inf`/`infinity` with an optional sign in any case,
/// as Apple and Python write them. Hex floats and other strtod extensions are refused.
func parseReal(_ p: UnsafeBufferPointer<UInt8>) -> Double? {
    var i = 0
    var negative = false
    if let first = p.first, first == ASCII.minus || first == ASCII.plus {
        negative = first == ASCII.minus
        i = 1
    }
    let rest = UnsafeBufferPointer(rebasing: p[i...])
    if let b = rest.first, !isDigit(b), b != ASCII.dot {
        var lower = [UInt8](rest)
        for k in lower.indices { lower[k] |= 0x20 }
        switch String(decoding: lower, as: UTF8.self) {
        case "nan": return .nan
        case "inf", "infinity": return negative ? -.infinity : .infinity
        default: return nil
        }
    }
    var digits = 0
    while i < p.count, isDigit(p[i]) { i += 1; digits += 1 }
    if i < p.count, p[i] == ASCII.dot {
        i += 1
        while i < p.count, isDigit(p[i]) { i += 1; digits += 1 }
    }
    guard digits > 0 else { return nil }
    if i < p.count, p[i] | 0x20 == 0x65 {
        i += 1
        if i < p.count, p[i] == ASCII.minus || p[i] == ASCII.plus { i += 1 }
        let exponentStart = i
        while i < p.count, isDigit(p[i]) { i += 1 }
        guard i > exponentStart else { return nil }
    }
    guard i == p.count else { return nil }
    return Double(String(decoding: p, as: UTF8.self))
}

/// An optional `+` or `-`: whether it is `-`, and where the digits start.
private func leadingSign(_ p: UnsafeBufferPointer<UInt8>) -> (negative: Bool, start: Int) {
    guard let first = p.first, first == ASCII.minus || first == ASCII.plus else { return (false, 0) }
    return (first == ASCII.minus, 1)
}

/// Signed 64-bit decimal with an optional sign; nil on anything else or on overflow.
func parseInteger(_ p: UnsafeBufferPointer<UInt8>) -> Int64? {
    let (negative, start) = leadingSign(p)
    var i = start
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
    let (negative, start) = leadingSign(p)
    var i = start
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
    // While checking the syntax, the digits are also gathered for the exact fast path below.
    var digits = 0
    var mantissa: UInt64 = 0
    var mantissaExact = true
    var fractionDigits = 0
    func gather(_ b: UInt8) {
        let (times10, o1) = mantissa.multipliedReportingOverflow(by: 10)
        let (next, o2) = times10.addingReportingOverflow(UInt64(b &- ASCII.zero))
        if o1 || o2 { mantissaExact = false } else { mantissa = next }
    }
    while i < p.count, isDigit(p[i]) { gather(p[i]); i += 1; digits += 1 }
    if i < p.count, p[i] == ASCII.dot {
        i += 1
        while i < p.count, isDigit(p[i]) { gather(p[i]); i += 1; digits += 1; fractionDigits += 1 }
    }
    guard digits > 0 else { return nil }
    var exponent = 0
    if i < p.count, p[i] | 0x20 == 0x65 {
        i += 1
        var exponentNegative = false
        if i < p.count, p[i] == ASCII.minus || p[i] == ASCII.plus {
            exponentNegative = p[i] == ASCII.minus
            i += 1
        }
        let exponentStart = i
        while i < p.count, isDigit(p[i]) {
            if i - exponentStart < 6 { exponent = exponent * 10 + Int(p[i] &- ASCII.zero) } else { mantissaExact = false }
            i += 1
        }
        guard i > exponentStart else { return nil }
        if exponentNegative { exponent = -exponent }
    }
    guard i == p.count else { return nil }
    // Clinger's fast path: a mantissa below 2^53 and a power of ten up to 1e22 are both exact
    // doubles, so one multiplication or division rounds correctly, as strtod would. Device
    // timestamps and coordinates nearly always qualify; the rest go to strtod.
    let scale = exponent - fractionDigits
    if mantissaExact, mantissa <= 1 << 53, scale >= -22, scale <= 22 {
        let magnitude = scale < 0 ? Double(mantissa) / exactPowersOfTen[-scale] : Double(mantissa) * exactPowersOfTen[scale]
        return negative ? -magnitude : magnitude
    }
    return Double(String(decoding: p, as: UTF8.self))
}

/// 1e0 through 1e22, the powers of ten a double holds exactly.
private let exactPowersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
]

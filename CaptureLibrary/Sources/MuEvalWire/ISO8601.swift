/// The plist date form `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±hh:mm)`, as seconds since 1970 UTC.
///
/// Fractions are kept to the microsecond (rounded), and `format` writes at most six digits, so
/// `parse(format(t)) == t` for every `t` that `parse` returns. Civil-date arithmetic after Howard Hinnant's
/// `days_from_civil`, so no calendar library is needed.
public enum ISO8601 {
    /// `text` as seconds since 1970 UTC; nil when it is not such a date (imports: IMUT's clock, GPX times).
    public static func parse(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { parse($0) }
    }

    /// 0000-01-01T00:00:00Z and the last microsecond of 9999: the years four digits can write.
    public static let earliest: Double = -62_167_219_200
    public static let latest: Double = 253_402_300_799.999_999

    public static func parse(_ p: UnsafeBufferPointer<UInt8>) -> Double? {
        let n = p.count
        func digits(_ at: Int, _ count: Int) -> Int? {
            guard at + count <= n else { return nil }
            var value = 0
            for k in at..<at + count {
                guard (0x30...0x39).contains(p[k]) else { return nil }
                value = value * 10 + Int(p[k] &- UInt8(ascii: "0"))
            }
            return value
        }
        func byte(_ at: Int) -> UInt8 { at < n ? p[at] : 0 }
        guard let year = digits(0, 4), byte(4) == UInt8(ascii: "-"), let month = digits(5, 2), byte(7) == UInt8(ascii: "-"),
              let day = digits(8, 2), byte(10) == 0x54 /* T */, let hour = digits(11, 2), byte(13) == UInt8(ascii: ":"),
              let minute = digits(14, 2), byte(16) == UInt8(ascii: ":"), let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), (1...daysInMonth(year, month)).contains(day),
              hour < 24, minute < 60, second < 60 else { return nil }
        var i = 19
        var micros = 0
        if byte(i) == UInt8(ascii: ".") {
            i += 1
            let start = i
            var scaled = 0  // the first seven digits, for rounding to six
            while i < n, (0x30...0x39).contains(p[i]) {
                if i - start < 7 { scaled = scaled * 10 + Int(p[i] &- UInt8(ascii: "0")) }
                i += 1
            }
            guard i > start else { return nil }
            for _ in min(i - start, 7)..<7 { scaled *= 10 }
            micros = (scaled + 5) / 10
        }
        var offset = 0
        switch byte(i) {
        case 0x5A /* Z */:
            i += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            guard let oh = digits(i + 1, 2), byte(i + 3) == UInt8(ascii: ":"), let om = digits(i + 4, 2), oh < 24, om < 60
            else { return nil }
            offset = (oh * 60 + om) * 60 * (p[i] == UInt8(ascii: "-") ? -1 : 1)
            i += 6
        default:
            return nil
        }
        guard i == n else { return nil }
        let days = daysFromCivil(year, month, day)
        let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset
        let value = Double(seconds) + Double(micros) / 1_000_000
        guard value >= earliest, value <= latest else { return nil }
        return value
    }

    /// The canonical UTC form of a time, e.g. `2100-01-01T00:00:00Z` (`format`, as a string).
    public static func string(_ time: Double) -> String {
        var text: [UInt8] = []
        format(time, into: &text)
        return String(decoding: text, as: UTF8.self)
    }

    /// Appends the canonical UTC form: fractional seconds only when non-zero, trailing zeros trimmed.
    /// Dates outside years 0000–9999 (and NaN) are clamped, since the plist form cannot write them.
    public static func format(_ time: Double, into out: inout [UInt8]) {
        let t = time.isNaN ? 0 : min(max(time, earliest), latest)
        var whole = t.rounded(.down)
        var micros = Int(((t - whole) * 1_000_000).rounded())
        if micros >= 1_000_000 {
            whole += 1
            micros -= 1_000_000
        }
        let seconds = Int(whole)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civilFromDays(days)
        // Formatted on the stack and appended once: this runs for every event's timestamp.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { text in
            var n = 0
            func put(_ value: Int, _ width: Int) {
                var v = value
                for k in stride(from: n + width - 1, through: n, by: -1) {
                    text[k] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: v % 10)
                    v /= 10
                }
                n += width
            }
            func put(_ byte: UInt8) {
                text[n] = byte
                n += 1
            }
            put(year, 4); put(UInt8(ascii: "-"))
            put(month, 2); put(UInt8(ascii: "-"))
            put(day, 2); put(0x54)
            put(secondOfDay / 3_600, 2); put(UInt8(ascii: ":"))
            put(secondOfDay / 60 % 60, 2); put(UInt8(ascii: ":"))
            put(secondOfDay % 60, 2)
            if micros > 0 {
                put(UInt8(ascii: "."))
                var fraction = micros
                var width = 6
                while fraction % 10 == 0 {
                    fraction /= 10
                    width -= 1
                }
                put(fraction, width)
            }
            put(0x5A)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: text[..<n]))
        }
    }

    private static func isLeapYear(_ y: Int) -> Bool { y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) }

    private static func daysInMonth(_ y: Int, _ m: Int) -> Int {
        switch m {
        case 2: return isLeapYear(y) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

internal import Glibc

/// A number as C's printf writes it (`"%.6g"`, `"%.3f"`), without Foundation's `String(format:)`: that one goes
/// through CFString, and was a third of a report's writing time, nearly all of it in the timeline's rows
/// (`perf record` of ReportBenchmark, 2026-11-29). Same text, as `PayloadSummaryTests` checks.
public enum PrintfNumber {
    public static func format(_ format: StaticString, _ value: Double) -> String {
        // 64 bytes hold any "%.6g" and any "%.3f" below 1e59; a longer one (1e300 as "%.3f") is written again at its length.
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            let needed = write(format, value, into: buffer)
            guard needed >= buffer.count else { return text(buffer, count: needed) }
            return withUnsafeTemporaryAllocation(of: CChar.self, capacity: needed + 1) { text($0, count: write(format, value, into: $0)) }
        }
    }

    /// `"%.3f"` as printf writes it, worked out in integers for the values a report has (below 2^52 / 1000 in
    /// magnitude: 142,000 years of seconds), printf for the others: the timeline's times took 6 % of a report's
    /// writing in `vsnprintf` and its argument list (`perf record` of ReportBenchmark, 2026-11-29).
    public static func thousandths(_ value: Double) -> String {
        let magnitude = abs(value)
        // Also NaN, which compares false.
        guard magnitude < 4.5e12, var units = UInt64(exactly: (magnitude * 1000).rounded(.down)) else { return format("%.3f", value) }
        // To the nearest thousandth, a half to even, as printf rounds the exact value: the remainder beyond the half
        // is computed exactly and rounded once (fma), so its sign is exact. magnitude * 1000 rounded may be one more
        // than the exact value's floor only when that is the nearest anyway.
        let beyondHalf = fma(magnitude, 1000, -(Double(units) + 0.5))
        if beyondHalf > 0 || (beyondHalf == 0 && units % 2 == 1) { units += 1 }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            var end = buffer.count
            func put(_ byte: UInt8) {
                end -= 1
                buffer[end] = byte
            }
            var fraction = units % 1000
            for _ in 0..<3 {
                put(UInt8(truncatingIfNeeded: fraction % 10) + 48)
                fraction /= 10
            }
            put(46)
            var whole = units / 1000
            repeat {
                put(UInt8(truncatingIfNeeded: whole % 10) + 48)
                whole /= 10
            } while whole > 0
            if value.sign == .minus { put(45) }
            return String(decoding: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[end...]), as: UTF8.self)
        }
    }

    /// The length the whole text needs (vsnprintf's count); a negative count, an encoding error, is said as nothing.
    private static func write(_ format: StaticString, _ value: Double, into buffer: UnsafeMutableBufferPointer<CChar>) -> Int {
        let count = withVaList([value]) { arguments in
            format.withUTF8Buffer { format in
                format.withMemoryRebound(to: CChar.self) { vsnprintf(buffer.baseAddress, buffer.count, $0.baseAddress, arguments) }
            }
        }
        return max(Int(clamping: count), 0)
    }

    private static func text(_ buffer: UnsafeMutableBufferPointer<CChar>, count: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress, count: min(count, buffer.count - 1)), as: UTF8.self)
    }
}

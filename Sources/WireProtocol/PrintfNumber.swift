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

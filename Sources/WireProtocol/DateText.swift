internal import Foundation
internal import MuEvalWire
#if canImport(Glibc)
internal import Glibc
#endif

/// Every way muEval writes a time for a person or a file, in one place. Each form is an interface
/// (JSON values, `muevalctl` columns, log lines, report text), so each stays exactly as it was
/// written before: the Foundation forms keep Foundation's rounding, the canonical one is `ISO8601`'s.
public enum DateText {
    /// `2011-02-19T22:43:06.5Z`: the plist and typed-JSON form, to the microsecond, with no trailing
    /// zeros (configuration values, value-range messages).
    public static func canonical(_ seconds: Double) -> String {
        ISO8601.string(seconds)
    }

    /// `2011-02-19T22:43:06Z`: whole seconds, UTC (log lines, `muevalctl` tables, payload summaries).
    public static func seconds(_ seconds: Double) -> String {
        Date(timeIntervalSince1970: seconds).formatted(.iso8601)
    }

    /// `2011-02-19T22:43:06.000Z`: always three fraction digits, UTC (`muevalctl events`).
    public static func milliseconds(_ seconds: Double) -> String {
        Date(timeIntervalSince1970: seconds).formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true)) + "Z"
    }

    /// `2011-02-19 22:43:06 UTC`: for reading (reports).
    public static func readable(_ seconds: Double) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss 'UTC'"
        return formatter.string(from: Date(timeIntervalSince1970: seconds))
    }

    /// `23:43:06.000`: the local wall-clock time with milliseconds (`muevalctl tail`, read next to the tester).
    public static func localClock(_ seconds: Double) -> String {
        var time = time_t(saturating: seconds.rounded(.down))
        var parts = tm()
        localtime_r(&time, &parts)
        let millis = Int(saturating: (seconds - seconds.rounded(.down)) * 1000)
        return String(format: "%02d:%02d:%02d.%03d", parts.tm_hour, parts.tm_min, parts.tm_sec, millis)
    }
}

import Foundation
import Glibc

/// What the kernel says about a process: CPU time (/proc/PID/stat) and peak resident memory
/// (VmHWM in /proc/PID/status).
struct ProcessStats {
    let pid: Int32

    /// User plus system CPU seconds so far, every thread included.
    func cpuSeconds() -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let afterName = stat.lastIndex(of: ")") else { return 0 }
        // Fields after "(comm)": state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: afterName)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Peak resident set size in bytes.
    func peakRSS() -> Int { statusKilobytes("VmHWM:") * 1024 }

    /// Current resident set size in bytes.
    func currentRSS() -> Int { statusKilobytes("VmRSS:") * 1024 }

    private func statusKilobytes(_ key: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(key) }) else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
    }
}

/// The machine the figures come from.
enum Machine {
    static var cpuModel: String {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let line = info.split(separator: "\n").first { $0.hasPrefix("model name") }
        return line.map { $0.split(separator: ":", maxSplits: 1).last!.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
    }

    static var cores: Int { Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    static var kernel: String {
        var name = utsname()
        uname(&name)
        return withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// The 1, 5 and 15 minute load averages.
    static var load: String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    static var memory: String {
        let info = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? ""
        let kilobytes = info.split(separator: "\n").first { $0.hasPrefix("MemTotal:") }
            .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? 0
        return String(format: "%.0f GiB", Double(kilobytes) / 1_048_576)
    }
}

/// Wall-clock seconds since 1970, the clock muevald stamps `received` with.
func wallClock() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

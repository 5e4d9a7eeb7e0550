internal import Foundation

/// muevald's open-file limit (RLIMIT_NOFILE). A service gets a soft limit of 1024 from systemd and a
/// shell often the same, whatever the hard limit allows; muevald raises the soft limit to the hard
/// one at start, so that the descriptor budget is as large as the machine lets it be.
struct OpenFileLimit: CustomStringConvertible {
    /// The soft limit found at start, the one in effect after raising it, and the hard limit.
    var found: Int
    var soft: Int
    var hard: Int

    /// Raises the soft limit to the hard one; where that fails, the soft limit stays as found.
    static func raise() -> OpenFileLimit {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            // Linux's own default, as a budget that is safe rather than large.
            return OpenFileLimit(found: 1024, soft: 1024, hard: 1024)
        }
        let found = limit.rlim_cur
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return OpenFileLimit(found: Int(clamping: found), soft: Int(clamping: limit.rlim_cur), hard: Int(clamping: limit.rlim_max))
    }

    var description: String {
        found == soft ? "open-file limit \(soft) (the hard limit is \(hard))" : "open-file limit raised from \(found) to \(soft), the hard limit"
    }
}

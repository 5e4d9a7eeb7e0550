public import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// How long a line of the control protocol may be, so that neither side buffers without bound.
public enum ControlLimits {
    /// A request line (the daemon's default; `control.max_request_bytes`).
    public static let maxRequestBytes = 1 << 20
    /// A reply line, read by the client. The daemon's lines are a page of events or an export chunk of
    /// about 1 MiB plus at most one event, which `limits.max_message_bytes` (16 MiB) bounds; base64
    /// and JSON escaping make that at most four times as large.
    public static let maxReplyLineBytes = 256 << 20
}

/// Where the control socket lives, as both the daemon and `muevalctl` work it out.
public enum ControlSocketPath {
    public static let fileName = "control.sock"

    /// The daemon's default: systemd's `$RUNTIME_DIRECTORY`, else `$XDG_RUNTIME_DIR/mueval`, else the data directory.
    public static func daemonDefault(dataDirectory: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let runtime = environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first, !runtime.isEmpty {
            return "\(runtime)/\(fileName)"
        }
        if let xdg = environment["XDG_RUNTIME_DIR"], !xdg.isEmpty {
            return "\(xdg)/mueval/\(fileName)"
        }
        return "\(dataDirectory)/\(fileName)"
    }

    /// The client's search order: `$MUEVAL_SOCKET`, then the first existing of `$XDG_RUNTIME_DIR/mueval`,
    /// `/run/mueval` (the systemd service) and `./mueval-data` (`make run`).
    public static func clientCandidates(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        if let explicit = environment["MUEVAL_SOCKET"], !explicit.isEmpty { return [explicit] }
        var candidates: [String] = []
        if let xdg = environment["XDG_RUNTIME_DIR"], !xdg.isEmpty { candidates.append("\(xdg)/mueval/\(fileName)") }
        candidates.append("/run/mueval/\(fileName)")
        candidates.append(FileManager.default.currentDirectoryPath + "/mueval-data/\(fileName)")
        return candidates
    }

    public static func clientDefault(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let candidates = clientCandidates(environment: environment)
        // A socket in a folder this user may not search (/run/mueval is 0750) is there all the same:
        // connecting to it then says which group to join instead of "not running".
        return candidates.first { presence($0) != .absent } ?? candidates[0]
    }

    /// Whether a socket file is at a path, as far as this user can tell.
    public enum Presence: Sendable, Equatable {
        case present
        /// A folder on the way keeps this user out (EACCES): the path may well exist.
        case hidden
        case absent
    }

    public static func presence(_ path: String) -> Presence {
        var info = stat()
        if stat(path, &info) == 0 { return .present }
        return errno == EACCES ? .hidden : .absent
    }

    /// Whether something accepts connections at `path` (a live daemon rather than a stale socket file).
    public static func isListening(_ path: String) -> Bool {
        guard let socket = try? UnixSocket.connect(path) else { return false }
        close(socket)
        return true
    }
}

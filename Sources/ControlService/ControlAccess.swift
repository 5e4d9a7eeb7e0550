internal import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// Who may use the control socket: the daemon's own user, root, and members of one configured
/// group (thesis 2.5.4: recordings are for authorised developers only). Checked with the
/// peer's kernel credentials (SO_PEERCRED), which a client cannot forge.
public struct ControlAccess: Sendable {
    public let ownUID: UInt32
    public let groupName: String?
    public let groupID: UInt32?

    /// Fails when the named group does not exist.
    public init(groupName: String?) throws {
        ownUID = getuid()
        self.groupName = groupName
        if let groupName {
            guard let group = getgrnam(groupName) else { throw ControlAccessError.unknownGroup(groupName) }
            groupID = group.pointee.gr_gid
        } else {
            groupID = nil
        }
    }

    public func allows(_ peer: PeerCredentials) -> Bool {
        if peer.uid == 0 || peer.uid == ownUID { return true }
        guard let groupID else { return false }
        return peer.gid == groupID || peer.supplementaryGroups.contains(groupID)
    }

    public func denial(for peer: PeerCredentials) -> String {
        let user = peer.userName ?? "uid \(peer.uid)"
        if let groupName {
            return "permission denied: \(user) may not control muevald; join the group \"\(groupName)\" (sudo usermod -aG \(groupName) \(user)) and log in again"
        }
        return "permission denied: \(user) may not control muevald; set control.group in the daemon's configuration to grant a group access"
    }
}

public enum ControlAccessError: Error, CustomStringConvertible {
    case unknownGroup(String)

    public var description: String {
        switch self {
        case .unknownGroup(let name): "control socket group \"\(name)\" does not exist (create it with groupadd, or change control.group)"
        }
    }
}

/// The identity of the process at the other end of a Unix socket.
public struct PeerCredentials: Sendable, Equatable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    public var supplementaryGroups: [UInt32]

    public init(pid: Int32, uid: UInt32, gid: UInt32, supplementaryGroups: [UInt32]) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.supplementaryGroups = supplementaryGroups
    }

    /// The peer's user name, nil when the user database has none for its uid. With getpwuid_r:
    /// control connections are served concurrently, and getpwuid's result is shared.
    public var userName: String? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &found) == 0, found != nil, let name = entry.pw_name else { return nil }
        return String(cString: name)
    }

    /// Reads the supplementary groups of `pid` from /proc (SO_PEERCRED gives only the primary group).
    static func supplementaryGroups(of pid: Int32) -> [UInt32] {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Groups:") }) else { return [] }
        return line.dropFirst("Groups:".count).split(whereSeparator: \.isWhitespace).compactMap { UInt32($0) }
    }
}

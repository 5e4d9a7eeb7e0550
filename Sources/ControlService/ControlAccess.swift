internal import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// Who may use the control socket: the daemon's own user, root, and members of one configured
/// group (thesis 2.5.4: recordings are for authorised developers only). Checked with the
/// peer's kernel credentials (SO_PEERCRED, SO_PEERGROUPS), which a client cannot forge.
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

    /// The credentials of the process at the other end of the Unix socket `socket`, as they were when it
    /// connected: SO_PEERCRED (pid, uid, primary group) and SO_PEERGROUPS (supplementary groups, Linux
    /// 4.13 and later). Nothing from /proc, which systemd's `ProtectProc=invisible` hides for other users.
    public init(socket: CInt) throws(PeerCredentialsError) {
        var credentials = KernelPeerCredentials(pid: 0, uid: 0, gid: 0)
        var length = socklen_t(MemoryLayout<KernelPeerCredentials>.size)
        guard getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { throw .peerCredentials(errno) }
        self.init(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid,
                  supplementaryGroups: try Self.supplementaryGroups(of: socket))
    }

    /// SO_PEERGROUPS answers ERANGE with the length it needs when the buffer is too small.
    private static func supplementaryGroups(of socket: CInt) throws(PeerCredentialsError) -> [UInt32] {
        var groups = [UInt32](repeating: 0, count: 64)
        while true {
            var length = socklen_t(groups.count * MemoryLayout<UInt32>.size)
            if getsockopt(socket, SOL_SOCKET, SO_PEERGROUPS, &groups, &length) == 0 {
                return Array(groups.prefix(Int(length) / MemoryLayout<UInt32>.size))
            }
            let code = errno
            guard code == ERANGE, Int(length) > groups.count * MemoryLayout<UInt32>.size else { throw .peerGroups(code) }
            groups = [UInt32](repeating: 0, count: Int(length) / MemoryLayout<UInt32>.size + 1)
        }
    }
}

/// `struct ucred` from <sys/socket.h>: Glibc's module map hides it behind _GNU_SOURCE, so it is
/// declared here with the same three C fields in the same order.
private struct KernelPeerCredentials {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32
}

public enum PeerCredentialsError: Error, Equatable, CustomStringConvertible {
    case peerCredentials(CInt)
    case peerGroups(CInt)

    public var description: String {
        switch self {
        case .peerCredentials(let code): "cannot read the peer's credentials of a control connection (SO_PEERCRED): \(String(cString: strerror(code)))"
        case .peerGroups(let code): "cannot read the peer's groups of a control connection (SO_PEERGROUPS, Linux 4.13 or later): \(String(cString: strerror(code)))"
        }
    }
}

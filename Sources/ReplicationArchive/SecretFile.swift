internal import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// A file that holds a secret (`storage.postgres.password_file`, `--password-file`), read only when
/// nobody else may read it. PostgreSQL's own rule for its secrets: a `~/.pgpass` that group or others
/// may read is ignored, and a server key must be 0600 owned by its user, or 0640 owned by root (so that
/// root keeps it and the service's group reads it). Refused rather than ignored here: a password that
/// others can read is already leaking, and a daemon that goes on without it would only fail later.
enum SecretFile {
    /// The most a password file may hold.
    static let maxBytes = 64 << 10

    /// The first line of the file at `path`, `option` naming it in errors. Checked on the open file, so
    /// that what is checked is what is read.
    static func firstLine(of path: String, option: String) throws(ReplicationError) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw .badSettings("\(option) \(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        let file = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw .badSettings("\(option) \(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        if let problem = problem(type: info.st_mode & S_IFMT, mode: info.st_mode & 0o7777, owner: info.st_uid, reader: geteuid()) {
            throw .badSettings("\(option) \(path) \(problem)")
        }
        let bytes: Data
        do {
            bytes = try file.read(upToCount: maxBytes + 1) ?? Data()
        } catch {
            throw .badSettings("\(option) \(path) cannot be read: \(error.localizedDescription)")
        }
        guard bytes.count <= maxBytes else { throw .badSettings("\(option) \(path) is longer than \(maxBytes) bytes: not a password file") }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
    }

    /// What is wrong with a file of `type`, `mode` and `owner` for a secret that `reader` (the effective
    /// uid) reads; nil when nothing is.
    static func problem(type: mode_t, mode: mode_t, owner: uid_t, reader: uid_t) -> String? {
        guard type == S_IFREG else { return "is not a regular file" }
        let octal = "0" + String(mode, radix: 8)
        guard owner == reader || owner == 0 else {
            return "is owned by uid \(owner), neither this process's user (uid \(reader)) nor root: "
                + "chown it to the user muevald runs as (or to root, with the service's group and mode 0640)"
        }
        if mode & 0o007 != 0 {
            return "may be read or changed by anyone (mode \(octal)): chmod 600 it (640 if root owns it and the service's group reads it)"
        }
        if owner == 0 {
            if mode & 0o030 != 0 {
                return "may be changed by its group (mode \(octal)): chmod 640 it"
            }
        } else if mode & 0o070 != 0 {
            return "may be read or changed by its group (mode \(octal)): chmod 600 it"
        }
        return nil
    }
}

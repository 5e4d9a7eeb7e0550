#if canImport(Glibc)
internal import Glibc
#endif

/// A new file that has no name: it lives while its descriptor is open, and nothing is left on disk, whatever ends
/// the process. The analysis's timeline scratch file and the transcription's vocabulary both keep what they computed in one.
public enum UnlinkedFile {
    /// A read-write, close-on-exec descriptor of a new, empty file made in the first of `directories` where that
    /// works, its name (`.PREFIX-RANDOM`) removed at once.
    ///
    /// A random name opened exclusively and close-on-exec in one call: mkstemp cannot say close-on-exec, and
    /// glibc's mkostemp is not in Swift's Glibc. muevald's children (the face scan, a study's completion command)
    /// must not inherit the file.
    public static func create(in directories: [String], prefix: String) throws(UnlinkedFileError) -> Int32 {
        var reason = "no directory to make it in"
        for directory in directories {
            for _ in 0..<100 {
                let path = (directory.hasSuffix("/") ? directory : directory + "/") + "." + prefix + "-"
                    + String(UInt64.random(in: 0...UInt64.max), radix: 36)
                let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
                if descriptor >= 0 {
                    unlink(path)
                    return descriptor
                }
                if errno != EEXIST { break }
            }
            reason = String(cString: strerror(errno))
        }
        throw UnlinkedFileError(directories: directories, reason: reason)
    }
}

/// No directory given would hold a new file.
public struct UnlinkedFileError: Error, CustomStringConvertible {
    public let directories: [String]
    /// The last directory's reason (`strerror`).
    public let reason: String

    public var description: String {
        "cannot make a temporary file in \(directories.joined(separator: " or ")): \(reason)"
    }
}

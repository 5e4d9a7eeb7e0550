internal import DescriptorIO
internal import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// Where muevalctl writes: standard output, standard error or an `export -o` file, through write(2).
///
/// Not `print` or `FileHandle.write`: stdio buffers (a followed stream must reach a pipe at once), and
/// `FileHandle.write` traps on EPIPE. A reader that went away (`muevalctl export … | head`) ends
/// muevalctl at once with status 0, like a Unix filter, and without a word: nothing was buffered, so
/// nothing is lost that the reader wanted.
struct Output: Sendable {
    let descriptor: Int32
    /// How errors name it: "standard output", or the file's path.
    let name: String

    static let standardOutput = Output(descriptor: STDOUT_FILENO, name: "standard output")
    static let standardError = Output(descriptor: STDERR_FILENO, name: "standard error")

    /// Creates (or truncates) `path` for writing; a new file is its owner's alone (0600): an export or
    /// a participant's voice is nobody else's to read.
    static func create(_ path: String) throws -> Output {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw OutputError(name: path, errno: errno) }
        return Output(descriptor: descriptor, name: path)
    }

    func write(_ text: String) throws {
        try write(Array(text.utf8))
    }

    func write(_ bytes: [UInt8]) throws {
        do throws(DescriptorIOError) {
            // A descriptor inherited in non-blocking mode: wait until it takes more.
            try Descriptor(descriptor).writeAll(bytes, waitingWhenFull: true)
        } catch where error.isReaderGone {
            Self.readerWentAway()
        } catch {
            throw OutputError(name: name, errno: error.errno)
        }
    }

    func close() throws {
        guard Glibc.close(descriptor) == 0 else { throw OutputError(name: name, errno: errno) }
    }

    /// Messages for the user: there is nowhere to report a failure to write them.
    static func message(_ text: String) {
        try? standardError.write(text.hasSuffix("\n") ? text : text + "\n")
    }

    /// Ends muevalctl quietly: its reader closed the pipe or socket. `_exit`, not `exit`: every byte went
    /// out through write(2), so there is nothing to flush, and no exit handler runs while other threads
    /// (NIO's) still do; the kernel closes the control connection, which releases the daemon's side.
    static func readerWentAway() -> Never {
        _exit(0)
    }

    /// For commands that follow (`tail`, `status --watch`): ends muevalctl as soon as the reader of
    /// standard output goes away, even while there is nothing to write that would notice.
    /// Only pipes and sockets say so (POLLERR, POLLHUP); a terminal's hang-up is SIGHUP's job.
    /// A thread of its own blocks in poll(2), off the async code's threads.
    static func endWhenReaderGoesAway() {
        var info = stat()
        guard fstat(STDOUT_FILENO, &info) == 0 else { return }
        let type = info.st_mode & S_IFMT
        guard type == S_IFIFO || type == S_IFSOCK else { return }
        let thread = Thread {
            while true {
                // No events asked for: POLLERR and POLLHUP are reported whatever was asked.
                var entry = pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)
                let ready = poll(&entry, 1, -1)
                if ready > 0, entry.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { readerWentAway() }
                if ready < 0, errno != EINTR { return }
            }
        }
        thread.name = "muevalctl stdout watch"
        thread.start()
    }
}

/// A write that failed for another reason than a departed reader (a full disk, a closed descriptor).
struct OutputError: Error, CustomStringConvertible {
    let name: String
    let errno: Int32

    var description: String { "cannot write \(name): \(String(cString: strerror(errno)))" }
}

extension String {
    /// A comma-separated option's items: `a, b,c` → ["a", "b", "c"].
    var commaSeparated: [String] {
        split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

internal import DescriptorIO
internal import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// A file to import, open for reading, with the name it was given by. Whoever asks for an import opens
/// its files (`muevalctl`, with its user's rights) and the importer reads only what it is handed, so
/// muevald never opens a path for a client (docs/IMPORT.md). Owns its descriptor: closed when released.
public final class ImportFile: Sendable {
    /// The name the file was given by (a path), for messages and the import's record.
    public let name: String
    /// Open for reading; passed to muevald as it is, and closed with this file.
    public let descriptor: CInt

    /// Takes `descriptor` over (it is closed even when this throws). Refuses anything but a regular
    /// file open for reading: a pipe or socket could keep the importer waiting for ever.
    public init(name: String, descriptor: CInt) throws(ImportError) {
        self.name = name
        self.descriptor = descriptor
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw ImportError(file: name, "cannot be read: \(Self.reason(errno))") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw ImportError(file: name, "is not a regular file") }
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, flags & Self.pathOnly == 0, flags & O_ACCMODE != O_WRONLY else {
            throw ImportError(file: name, "is not open for reading")
        }
    }

    deinit { Glibc.close(descriptor) }

    /// O_PATH, which Glibc's module map hides behind _GNU_SOURCE: a descriptor that names a file and reads nothing.
    private static let pathOnly: CInt = 0o10000000

    /// Opens `path` with this process's rights. Non-blocking, so that a FIFO fails the regular-file
    /// check instead of waiting for a writer.
    public static func open(_ path: String) throws(ImportError) -> ImportFile {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            throw ImportError(file: path, code == ENOENT ? "no such file" : code == EACCES ? "cannot be read (permission denied)" : "cannot be read: \(reason(code))")
        }
        return try ImportFile(name: path, descriptor: descriptor)
    }

    /// The file's size in bytes now.
    var size: Int64 {
        get throws(ImportError) {
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { throw ImportError(file: name, "cannot be read: \(Self.reason(errno))") }
            return Int64(info.st_size)
        }
    }

    /// Reads up to `buffer.count` bytes at `offset` (not the descriptor's own position, which its
    /// sender shares), fewer only at the end of the file; 0 there.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(ImportError) -> Int {
        do throws(DescriptorIOError) {
            return try Descriptor(descriptor).readFully(into: buffer, at: offset)
        } catch {
            throw ImportError(file: name, at: .byte(error.offset ?? offset), "cannot be read: \(error.reason)")
        }
    }

    private static func reason(_ code: CInt) -> String { String(cString: strerror(code)) }
}

/// An `InputStream` over an import file, for `XMLParser(stream:)`: Foundation's own streams open files by
/// path, and the importer has only the descriptor it was handed.
final class ImportFileStream: InputStream {
    private let file: ImportFile
    private var offset: Int64 = 0
    /// Why a read failed; `XMLParser` learns only that it did.
    private(set) var failure: ImportError?
    private var utf8 = UTF8Check()

    init(_ file: ImportFile) {
        self.file = file
        super.init(data: Data())
    }

    override func open() {}
    override func close() {}
    override var hasBytesAvailable: Bool { failure == nil }
    /// What XMLParser asks after a read returned -1 (the base class's getter traps on this subclass).
    override var streamError: (any Error)? { failure }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        do {
            let count = try file.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: maxLength), at: offset)
            // Foundation's XMLParser reads freed memory when libxml2 hands it an element name that is not UTF-8
            // (found by fuzzing, docs/FUZZING.md): such a file stops here, before the parser sees it.
            if let bad = utf8.check(UnsafeBufferPointer(start: buffer, count: count), at: offset) {
                failure = ImportError(file: file.name, at: .byte(bad), "is not UTF-8 text: muEval reads XML files as UTF-8")
                return -1
            }
            offset += Int64(count)
            return count
        } catch {
            failure = error
            return -1
        }
    }
}

/// Checks that a file read in pieces is UTF-8, a sequence cut by the end of one piece completed by the next.
struct UTF8Check {
    /// The start of a sequence the last piece ended inside, kept to be checked with the next piece.
    private var pending: [UInt8] = []

    /// Nil while `piece` (read at `offset`; empty at the end of the file) continues valid UTF-8; else the
    /// offset of the sequence that is not.
    mutating func check(_ piece: UnsafeBufferPointer<UInt8>, at offset: Int64) -> Int64? {
        let start = offset - Int64(pending.count)
        var bytes = pending
        bytes.append(contentsOf: piece)
        pending = []
        // Where the last sequence starts, when the piece may have cut it: a lead byte within its last 3 bytes.
        var end = bytes.count
        if !piece.isEmpty, let lead = bytes.indices.suffix(3).last(where: { bytes[$0] & 0xC0 != 0x80 }), bytes[lead] >= 0xC0 {
            let length = bytes[lead] >= 0xF0 ? 4 : bytes[lead] >= 0xE0 ? 3 : 2
            if bytes.count - lead < length { end = lead }
        }
        var decoder = Unicode.UTF8.ForwardParser()
        var iterator = bytes[..<end].makeIterator()
        var position = 0
        while true {
            switch decoder.parseScalar(from: &iterator) {
            case .valid(let scalar): position += scalar.count
            case .emptyInput:
                pending = Array(bytes[end...])
                return nil
            case .error: return start + Int64(position)
            }
        }
    }
}

internal import DescriptorIO
internal import Glibc
internal import WireProtocol

/// A file written through a small buffer: the replay index's parts (chunks, chunk table, notes) as the writer
/// makes them, and the whole file they are put together into.
final class BufferedFileWriter {
    let path: String
    private let fd: Descriptor
    private var buffer: [UInt8] = []
    private var written: Int64 = 0
    private static let flushBytes = 64 << 10

    init(path: String) throws {
        self.path = path
        let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ReplayIndexError("open \(path)", errno: errno) }
        self.fd = Descriptor(fd)
    }

    deinit { Glibc.close(fd.rawValue) }

    /// Bytes written so far, buffered ones included.
    var count: Int64 { written + Int64(buffer.count) }

    func separate() { if count > 0 { buffer.append(UInt8(ascii: ",")) } }
    func append(_ text: StaticString) { text.withUTF8Buffer { buffer.append(contentsOf: $0) } }
    func append(bytes: [UInt8]) { buffer.append(contentsOf: bytes) }
    func append(integer: Int64) { JSONObject.integer(integer, to: &buffer) }
    func append(number: Double) { JSONObject.number(number, to: &buffer) }
    func append(string: String) { JSONString.append(string, to: &buffer) }

    func flushIfFull() throws { if buffer.count >= Self.flushBytes { try flush() } }

    func write(_ bytes: [UInt8]) throws {
        buffer.append(contentsOf: bytes)
        try flushIfFull()
    }

    func flush() throws {
        do {
            try fd.writeAll(buffer)
        } catch {
            throw ReplayIndexError("write \(path)", error)
        }
        written += Int64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Appends what `other` holds, a piece at a time.
    func copy(_ other: BufferedFileWriter) throws {
        try flush()
        try other.flush()
        let source = try ReplayIndexFile.OpenFile(path: other.path)
        var offset: Int64 = 0
        while offset < other.count {
            let piece = try source.read(offset..<min(other.count, offset + Int64(1 << 20)))
            guard !piece.isEmpty else { break }
            try write(piece)
            try flush()
            offset += Int64(piece.count)
        }
    }

    /// Flushed and on disk.
    func finish() throws {
        try flush()
        guard fsync(fd.rawValue) == 0 else { throw ReplayIndexError("fsync \(path)", errno: errno) }
    }

    func remove() { unlink(path) }
}

internal import DescriptorIO
internal import Foundation
internal import Glibc
internal import WireProtocol

/// One replay index file opened for reading: what the Replay page's range requests and the JSON of
/// `GET /api/sessions/ID/replay` read. Reads are positional (`pread`), so one open file serves any
/// number of requests at once, and a file replaced meanwhile (rebuilt) is not seen half-way.
package final class ReplayIndexFile: Sendable {
    package let descriptor: OpenFile
    package let size: Int64
    package let preamble: ReplayIndex.Preamble
    /// Names this version of the file: a page that read its head sends it back (`If-Match`) with each range.
    package let etag: String

    /// Nil when there is no file, or one of another version or shape (to be written again).
    package init?(path: String) throws {
        guard let descriptor = try? OpenFile(path: path) else { return nil }
        var status = stat()
        guard fstat(descriptor.fd.rawValue, &status) == 0 else { throw ReplayIndexError("stat \(path)", errno: errno) }
        let size = Int64(status.st_size)
        guard let preamble = ReplayIndex.preamble(from: try descriptor.read(0..<min(size, Int64(ReplayIndex.preambleBytes)))),
              preamble.version == ReplayIndex.version,
              preamble.headBytes <= size - Int64(ReplayIndex.preambleBytes) else { return nil }
        self.descriptor = descriptor
        self.size = size
        self.preamble = preamble
        etag = "\"\(preamble.version)-\(preamble.sessionEvents)-\(size)-\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)\""
    }

    /// Where the chunks begin.
    package var chunksOffset: Int64 { Int64(ReplayIndex.preambleBytes) + preamble.headBytes }

    package func head() throws -> ReplayIndex.Head {
        try JSONDecoder().decode(ReplayIndex.Head.self, from: Data(try descriptor.read(Int64(ReplayIndex.preambleBytes)..<chunksOffset)))
    }

    package func chunk(_ entry: ReplayIndex.Head.ChunkEntry) throws -> ReplayIndex.Chunk {
        guard entry.offset >= 0, entry.bytes >= 0, let start = chunksOffset.checkedAdding(entry.offset),
              let end = start.checkedAdding(entry.bytes), end <= size else {
            throw ReplayIndexError(damaged: "it names a chunk beyond its end")
        }
        return try JSONDecoder().decode(ReplayIndex.Chunk.self, from: Data(try descriptor.read(start..<end)))
    }

    /// An open file, closed with its last user.
    package final class OpenFile: Sendable {
        let fd: Descriptor

        init(path: String) throws {
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw ReplayIndexError("open \(path)", errno: errno) }
            self.fd = Descriptor(fd)
        }

        deinit { Glibc.close(fd.rawValue) }

        /// The bytes of `range` (fewer where the file ends).
        package func read(_ range: Range<Int64>) throws -> [UInt8] {
            do {
                return try fd.readFully(count: Int(range.count), at: range.lowerBound)
            } catch {
                throw ReplayIndexError("read", error)
            }
        }
    }
}

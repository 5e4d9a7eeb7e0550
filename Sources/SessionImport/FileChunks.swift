internal import Crypto
internal import Foundation
internal import SessionModel

/// A file read front to back in fixed-size chunks: an import of any size holds one chunk, never the file.
struct FileChunks {
    static let chunkBytes = 1 << 20

    let file: ImportFile
    /// Bytes read so far.
    private(set) var offset: Int64 = 0

    /// From the file's first byte, wherever its descriptor stands.
    init(_ file: ImportFile) {
        self.file = file
    }

    /// The next chunk, empty at the end of the file.
    mutating func next() throws(ImportError) -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: Self.chunkBytes)
        let start = offset
        let read = chunk.withUnsafeMutableBytes { buffer in Result { () throws(ImportError) in try file.read(into: buffer, at: start) } }
        chunk.removeSubrange(try read.get()...)
        offset += Int64(chunk.count)
        return chunk
    }

    /// The file's size, checked against `limit` before anything is read.
    static func size(of file: ImportFile, limit: Int64) throws(ImportError) -> Int64 {
        let size = try file.size
        guard size <= limit else {
            throw ImportError(file: file.name, "is \(size) bytes, more than import's max-file-bytes (\(limit)); raise it in muevald's configuration")
        }
        return size
    }

    /// SHA-256 of the whole file (hex), one chunk at a time; and its first bytes, for recognising its format.
    static func fingerprint(of file: ImportFile) throws(ImportError) -> (sha256: String, head: [UInt8]) {
        var chunks = FileChunks(file)
        var hash = SHA256()
        var head: [UInt8] = []
        while case let chunk = try chunks.next(), !chunk.isEmpty {
            if head.isEmpty { head = Array(chunk.prefix(4096)) }
            hash.update(data: chunk)
        }
        return (lowercaseHex(hash.finalize()), head)
    }
}

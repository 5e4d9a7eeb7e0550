internal import Crypto
internal import Foundation
internal import WireProtocol

/// A file read front to back in fixed-size chunks: an import of any size holds one chunk, never the file.
struct FileChunks {
    static let chunkBytes = 1 << 20

    let path: String
    private let handle: FileHandle
    /// Bytes read so far.
    private(set) var offset: Int64 = 0

    init(path: String) throws(ImportError) {
        self.path = path
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read (permission denied?)" : "no such file"
            throw ImportError(file: path, reason)
        }
        self.handle = handle
    }

    /// The next chunk, empty at the end of the file.
    mutating func next() throws(ImportError) -> [UInt8] {
        do {
            let data = try handle.read(upToCount: Self.chunkBytes) ?? Data()
            offset += Int64(data.count)
            return [UInt8](data)
        } catch {
            throw ImportError(file: path, at: .byte(offset), "cannot be read: \(error.localizedDescription)")
        }
    }

    func close() { try? handle.close() }

    /// The file's size, checked against `limit` before anything is read.
    static func size(of path: String, limit: Int64) throws(ImportError) -> Int64 {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw ImportError(file: path, FileManager.default.fileExists(atPath: path) ? "cannot be read" : "no such file")
        }
        guard (attributes[.type] as? FileAttributeType) == .typeRegular else { throw ImportError(file: path, "is not a regular file") }
        let size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
        guard size <= limit else {
            throw ImportError(file: path, "is \(size) bytes, more than import's max-file-bytes (\(limit)); raise it in muevald's configuration")
        }
        return size
    }

    /// SHA-256 of the whole file (hex), one chunk at a time; and its first bytes, for recognising its format.
    static func fingerprint(of path: String) throws(ImportError) -> (sha256: String, head: [UInt8]) {
        var chunks = try FileChunks(path: path)
        defer { chunks.close() }
        var hash = SHA256()
        var head: [UInt8] = []
        while case let chunk = try chunks.next(), !chunk.isEmpty {
            if head.isEmpty { head = Array(chunk.prefix(4096)) }
            hash.update(data: chunk)
        }
        return (lowercaseHex(hash.finalize()), head)
    }
}

internal import Foundation

/// A page as it is written: text goes into a buffer that is handed to the file whenever it holds
/// `flushBytes`, so that writing a page of any size (an hour's timeline is 15 MB of rows, a day's
/// ten times that) costs the buffer, not the page. Without a file it keeps the whole page (`text`).
final class ReportOutput {
    static let flushBytes = 1 << 16

    private var buffer: [UInt8] = []
    private var file: UnsafeMutablePointer<FILE>?
    private let path: String

    /// Writes to `path`, created or emptied; like `ReportDirectory.writeFile`, without fsync: a half-written
    /// report is simply written again.
    init(path: String) throws(ReportError) {
        guard let file = fopen(path, "wb") else {
            throw .cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
        self.file = file
        self.path = path
        buffer.reserveCapacity(Self.flushBytes * 2)
    }

    /// Keeps the page in memory.
    init() {
        path = ""
    }

    deinit {
        if let file { fclose(file) }
    }

    func append(_ text: String) throws(ReportError) {
        buffer.append(contentsOf: text.utf8)
        if file != nil, buffer.count >= Self.flushBytes { try flush() }
    }

    /// The page kept in memory (empty for a file).
    var text: String { String(decoding: buffer, as: UTF8.self) }

    /// Writes what is left and closes the file.
    func close() throws(ReportError) {
        guard let file else { return }
        try flush()
        self.file = nil
        guard fclose(file) == 0 else { throw .cannotWrite(path: path, reason: String(cString: strerror(errno))) }
    }

    private func flush() throws(ReportError) {
        guard let file, !buffer.isEmpty else { return }
        let written = buffer.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        guard written == buffer.count else { throw .cannotWrite(path: path, reason: String(cString: strerror(errno))) }
        buffer.removeAll(keepingCapacity: true)
    }
}

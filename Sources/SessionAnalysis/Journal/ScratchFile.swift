internal import DescriptorIO
internal import Foundation
internal import UnlinkedFiles

/// An unlinked file beside the session that a result of the journal's one pass is kept in instead of memory
/// (issue 41): the timeline's lines, the strokes. Appended to during the pass only, then read by any number of
/// readers, each with a cursor at its own offset (`pread`): that is what makes sharing it across threads safe
/// after the pass. Values are little-endian; a text is its UTF-8 length (`UInt32`, `.max` for nil) and bytes.
final class ScratchFile: @unchecked Sendable {
    /// Written and read in pieces of this size.
    static let chunk = 1 << 16
    /// What is kept, for errors ("timeline", "strokes").
    let purpose: String
    private let descriptor: Int32
    private var pending: [UInt8] = []
    private var written: Int64 = 0

    /// In `directory` when it can be written (the session's own, so that it fills the disk that holds
    /// sessions rather than a small /tmp), else in the temporary directory.
    init(directory: String, purpose: String) throws {
        self.purpose = purpose
        do {
            descriptor = try UnlinkedFile.create(in: [directory.isEmpty ? "." : directory, NSTemporaryDirectory()],
                                                 prefix: "mueval-\(purpose)")
        } catch {
            throw AnalysisError.notKeptInScratch(purpose, "\(error)")
        }
    }

    deinit {
        close(descriptor)
    }

    func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { pending.append(contentsOf: $0) }
    }

    func append(_ value: Double) {
        append(value.bitPattern)
    }

    func append(_ text: String?) throws {
        guard let text else { return append(UInt32.max) }
        let utf8 = text.utf8
        // Events are far smaller (the wire's limits); a longer text would not fit its length (.max means nil).
        guard let length = UInt32(exactly: utf8.count), length < .max else {
            throw AnalysisError.notKeptInScratch(purpose, "a text of \(utf8.count) bytes")
        }
        append(length)
        pending.append(contentsOf: utf8)
    }

    /// Writes what is pending once a chunk is: after each record.
    func recordEnded() throws {
        if pending.count >= Self.chunk { try flush() }
    }

    /// Writes what is pending: after the last record, before the first read.
    func flush() throws {
        do throws(DescriptorIOError) {
            try Descriptor(descriptor).writeAll(pending, at: written)
        } catch {
            throw AnalysisError.notKeptInScratch(purpose, error.reason)
        }
        written += Int64(pending.count)
        pending.removeAll(keepingCapacity: true)
    }

    /// A reader from the start of what was flushed.
    func cursor() -> Cursor {
        Cursor(file: self)
    }

    /// Reads the file a chunk at a time.
    struct Cursor {
        private let file: ScratchFile
        private let end: Int64
        private var offset: Int64 = 0
        private var buffer: [UInt8] = []
        private var position = 0

        fileprivate init(file: ScratchFile) {
            self.file = file
            end = file.written
        }

        var hasMore: Bool { position < buffer.count || offset < end }
        /// The file's, for errors.
        var purpose: String { file.purpose }

        mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
            try need(MemoryLayout<T>.size)
            var value: T = 0
            withUnsafeMutableBytes(of: &value) { target in
                buffer.withUnsafeBytes { target.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[position..<position + MemoryLayout<T>.size])) }
            }
            position += MemoryLayout<T>.size
            return T(littleEndian: value)
        }

        mutating func double() throws -> Double {
            Double(bitPattern: try integer(UInt64.self))
        }

        mutating func optionalString() throws -> String? {
            let length = try integer(UInt32.self)
            return length == .max ? nil : try text(Int(length))
        }

        mutating func string() throws -> String {
            try text(Int(try integer(UInt32.self)))
        }

        private mutating func text(_ length: Int) throws -> String {
            try need(length)
            defer { position += length }
            return String(decoding: buffer[position..<position + length], as: UTF8.self)
        }

        /// Makes `count` bytes available from `position`, reading on from the file.
        private mutating func need(_ count: Int) throws {
            guard buffer.count - position < count else { return }
            buffer.removeFirst(position)
            position = 0
            let missing = count - buffer.count
            let wanted = Int(min(Int64(max(ScratchFile.chunk, missing)), end - offset))
            guard wanted >= missing else { throw AnalysisError.notKeptInScratch(file.purpose, "its file ends inside a record") }
            let start = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: wanted))
            let read: Int
            do {
                read = try buffer.withUnsafeMutableBytes { bytes in
                    try Descriptor(file.descriptor).readFully(into: UnsafeMutableRawBufferPointer(rebasing: bytes[start...]), at: offset)
                }
            } catch let error as DescriptorIOError {
                throw AnalysisError.notKeptInScratch(file.purpose, error.reason)
            }
            // Fewer only if the file ended before what was written to it.
            guard read == wanted else { throw AnalysisError.notKeptInScratch(file.purpose, "its file ends inside a record") }
            offset += Int64(read)
        }
    }
}

internal import Foundation
internal import UnlinkedFiles

/// The timeline's lines as the journal's one pass computes them, in an unlinked file beside the session (issue 41):
/// an hour's 100,000 lines (a day's millions) are never in memory, and no event is decoded a second time when the
/// report writes them. Written during the pass only, then read by any number of readers, each at its own offset
/// (`pread`): that is what makes sharing it across threads safe after the pass.
final class TimelineSpool: @unchecked Sendable {
    /// Written and read in pieces of this size.
    static let chunk = 1 << 16
    private let descriptor: Int32
    private var pending: [UInt8] = []
    private var written: Int64 = 0

    /// In `directory` when it can be written (the session's own, so that it fills the disk that holds
    /// sessions rather than a small /tmp), else in the temporary directory.
    init(directory: String) throws {
        do {
            descriptor = try UnlinkedFile.create(in: [directory, NSTemporaryDirectory()], prefix: "mueval-timeline")
        } catch {
            throw AnalysisError.timelineNotKept("\(error)")
        }
    }

    deinit {
        close(descriptor)
    }

    func append(_ entry: TimelineEntry) throws {
        append(UInt64(bitPattern: entry.eventID))
        append(entry.time.bitPattern)
        try append(entry.eventClass)
        try append(entry.type)
        if let view = entry.view { try append(view) } else { append(UInt32.max) }
        try append(entry.summary)
        if pending.count >= Self.chunk { try flush() }
    }

    /// Writes what is pending: after the last `append`, before the first read.
    func flush() throws {
        try pending.withUnsafeBytes { bytes in
            var done = 0
            while done < bytes.count {
                let count = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(written))
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { throw AnalysisError.timelineNotKept(String(cString: strerror(errno))) }
                done += count
                written += Int64(count)
            }
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// Every line in the order appended; `screenshot` is left nil (the caller knows the screenshots).
    func forEach(_ body: (TimelineEntry) throws -> Void) throws {
        var cursor = Cursor(descriptor: descriptor, end: written)
        while cursor.hasMore {
            let id = Int64(bitPattern: try cursor.integer(UInt64.self))
            let time = Double(bitPattern: try cursor.integer(UInt64.self))
            let eventClass = try cursor.string()
            let type = try cursor.string()
            let view = try cursor.optionalString()
            try body(TimelineEntry(eventID: id, time: time, eventClass: eventClass, type: type, view: view,
                                   summary: try cursor.string(), screenshot: nil))
        }
    }

    private func append<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { pending.append(contentsOf: $0) }
    }

    private func append(_ text: String) throws {
        let utf8 = text.utf8
        // Events are far smaller (the wire's limits); a longer text would not fit its length (.max means nil).
        guard let length = UInt32(exactly: utf8.count), length < .max else {
            throw AnalysisError.timelineNotKept("a text of \(utf8.count) bytes")
        }
        append(length)
        pending.append(contentsOf: utf8)
    }

    /// Reads the spool a chunk at a time.
    private struct Cursor {
        let descriptor: Int32
        let end: Int64
        var offset: Int64 = 0
        var buffer: [UInt8] = []
        var position = 0

        init(descriptor: Int32, end: Int64) {
            self.descriptor = descriptor
            self.end = end
        }

        var hasMore: Bool { position < buffer.count || offset < end }

        mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
            try need(MemoryLayout<T>.size)
            var value: T = 0
            withUnsafeMutableBytes(of: &value) { target in
                buffer.withUnsafeBytes { target.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[position..<position + MemoryLayout<T>.size])) }
            }
            position += MemoryLayout<T>.size
            return T(littleEndian: value)
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
            while buffer.count < count {
                let wanted = Int(min(Int64(max(TimelineSpool.chunk, count - buffer.count)), end - offset))
                guard wanted > 0 else { throw AnalysisError.timelineNotKept("its file ends inside a line") }
                let start = buffer.count
                buffer.append(contentsOf: repeatElement(0, count: wanted))
                let read = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + start, wanted, off_t(offset)) }
                if read < 0, errno == EINTR { buffer.removeLast(wanted); continue }
                guard read > 0 else { throw AnalysisError.timelineNotKept(String(cString: strerror(errno))) }
                buffer.removeLast(wanted - read)
                offset += Int64(read)
            }
        }
    }
}

internal import DequeModule
internal import DescriptorIO
internal import MuEvalWire
#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The on-disk copy of what a device recorded and the server has not settled, so that what was
/// recorded while no server was reachable, or just before the app was killed, is delivered on the
/// next start. One file per device id, `DIRECTORY/DEVICE.spool`, locked while a process uses it.
///
/// A 32-byte header (magic, version, the seq through which everything is settled, the highest seq
/// ever spooled) and then records: length (UInt32), seq (Int64), the encoded message, little-endian.
/// Records are appended with one `write` per batch (the header is rewritten when something is
/// settled) and never fsynced: the copy survives the app's
/// death (it is in the kernel's page cache) but not a power cut, which a phone rarely has mid-test
/// and an fsync per event would cost more than the events. Written by hand: no package keeps an
/// append-only record file, and this one is 200 lines. Unchecked Sendable: after `startCapture` opens
/// it, only that capture's driver task uses it.
final class CaptureSpool: @unchecked Sendable {
    static let magic = Array("MUEVALSP".utf8)
    static let version: UInt32 = 1
    static let headerBytes = 32
    /// Below this size the file is never rewritten.
    static let compactBytes = 1 << 20

    let path: String
    private var descriptor: Int32
    /// Records in the file, in seq order: their seq and size on disk. Those through `forgottenThrough`
    /// are a prefix: `settledRecords` of them, `settledBytes` long.
    private var records: Deque<(seq: Int64, bytes: Int)> = []
    private var settledRecords = 0
    private var settledBytes = 0
    private var fileBytes: Int
    private(set) var forgottenThrough: Int64
    private(set) var highestSeq: Int64
    /// What an earlier run left to deliver (read once, at opening).
    private(set) var backlog: [(seq: Int64, bytes: [UInt8], kind: Selectable)] = []

    init(directory: String, deviceId: String) throws(CaptureError) {
        let name = String(deviceId.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
        path = directory + "/" + name + ".spool"
        mkdir(directory, 0o700)
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .spool(path, Self.errnoText()) }
        do throws(CaptureError) {
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                throw CaptureError.spool(path, "another process records as this device")
            }
            (fileBytes, forgottenThrough, highestSeq) = (0, 0, 0)
            try load()
        } catch {
            close(descriptor)
            throw error
        }
    }

    deinit {
        close(descriptor)
    }

    /// Reads the header and the records; a record cut short (the app died mid-write) is cut off.
    private func load() throws(CaptureError) {
        var contents: [UInt8] = []
        while true {
            let chunk: [UInt8]
            do { chunk = try Descriptor(descriptor).readFully(count: 1 << 16, at: Int64(contents.count)) } catch { throw .spool(path, error.reason) }
            contents += chunk
            if chunk.count < 1 << 16 { break }
        }
        guard contents.count >= Self.headerBytes, Array(contents[0..<8]) == Self.magic else {
            // New (or not a spool: it is emptied, as nothing in it can be read).
            guard ftruncate(descriptor, 0) == 0 else { throw .spool(path, Self.errnoText()) }
            try writeHeader()
            fileBytes = Self.headerBytes
            return
        }
        guard Self.uint32(contents, at: 8) == Self.version else {
            throw .spool(path, "written by a newer MuEvalCapture (version \(Self.uint32(contents, at: 8)))")
        }
        forgottenThrough = Self.int64(contents, at: 16)
        highestSeq = Self.int64(contents, at: 24)
        var offset = Self.headerBytes
        while offset + 12 <= contents.count {
            let length = Int(Self.uint32(contents, at: offset))
            guard offset + 12 + length <= contents.count else { break }
            let seq = Self.int64(contents, at: offset + 4)
            let bytes = Array(contents[(offset + 12)..<(offset + 12 + length)])
            records.append((seq, 12 + length))
            highestSeq = max(highestSeq, seq)
            if seq > forgottenThrough {
                // Nil for what cannot be delivered: it was never a message this library wrote.
                if let kind = KeyValueMessage(bytes).flatMap(Selectable.init) { backlog.append((seq, bytes, kind)) }
            }
            offset += 12 + length
        }
        fileBytes = offset
        if offset < contents.count { ftruncate(descriptor, off_t(offset)) }
        advanceSettled()
    }

    /// Appends messages (in seq order) with one write.
    func append(_ messages: [(seq: Int64, bytes: [UInt8])]) throws(CaptureError) {
        var out: [UInt8] = []
        out.reserveCapacity(messages.reduce(0) { $0 + 12 + $1.bytes.count })
        for message in messages {
            Self.append(UInt32(message.bytes.count), to: &out)
            Self.append(UInt64(bitPattern: message.seq), to: &out)
            out += message.bytes
            records.append((message.seq, 12 + message.bytes.count))
            highestSeq = max(highestSeq, message.seq)
        }
        // The header is not rewritten: loading takes the highest seq from the records too.
        try write(out, at: fileBytes)
        fileBytes += out.count
    }

    /// Everything through `seq` is settled: the header says so, and a file mostly settled is rewritten.
    func forget(through seq: Int64) throws(CaptureError) {
        forgottenThrough = max(forgottenThrough, seq)
        advanceSettled()
        if fileBytes > Self.compactBytes, settledBytes * 2 > fileBytes - Self.headerBytes {
            try compact()
        } else {
            try writeHeader()
        }
    }

    /// Rewrites the file with the records not settled, through a new file renamed over the old one
    /// (the lock stays on the descriptor, which is then the new file's).
    private func compact() throws(CaptureError) {
        // What is not settled is the file's tail: one read.
        let start = Self.headerBytes + settledBytes
        let live: [UInt8]
        do { live = try Descriptor(descriptor).readFully(count: fileBytes - start, at: Int64(start)) } catch {
            throw .spool(path, "cannot read back the records: \(error.reason)")
        }
        guard live.count == fileBytes - start else { throw .spool(path, "cannot read back the records: the file is shorter than its records") }
        try rewrite(live)
        records.removeFirst(settledRecords)
        (settledRecords, settledBytes) = (0, 0)
    }

    /// Counts the records `forgottenThrough` now covers into the settled prefix.
    private func advanceSettled() {
        while settledRecords < records.count, records[settledRecords].seq <= forgottenThrough {
            settledBytes += records[settledRecords].bytes
            settledRecords += 1
        }
    }

    /// The file becomes the header and `body`: a new file, locked, then renamed over the old one, so
    /// that a crash leaves one or the other whole.
    private func rewrite(_ body: [UInt8]) throws(CaptureError) {
        let temporary = path + ".new"
        let replacement = open(temporary, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard replacement >= 0 else { throw .spool(temporary, Self.errnoText()) }
        let previous = descriptor
        descriptor = replacement
        do throws(CaptureError) {
            guard flock(replacement, LOCK_EX | LOCK_NB) == 0 else { throw CaptureError.spool(temporary, Self.errnoText()) }
            try write(header() + body, at: 0)
            guard rename(temporary, path) == 0 else { throw CaptureError.spool(path, Self.errnoText()) }
        } catch {
            descriptor = previous
            close(replacement)
            unlink(temporary)
            throw error
        }
        close(previous)
        fileBytes = Self.headerBytes + body.count
    }

    private func writeHeader() throws(CaptureError) {
        try write(header(), at: 0)
    }

    private func header() -> [UInt8] {
        var out = Self.magic
        Self.append(Self.version, to: &out)
        Self.append(UInt32(0), to: &out)
        Self.append(UInt64(bitPattern: forgottenThrough), to: &out)
        Self.append(UInt64(bitPattern: highestSeq), to: &out)
        return out
    }

    private func write(_ bytes: [UInt8], at offset: Int) throws(CaptureError) {
        do { try Descriptor(descriptor).writeAll(bytes, at: Int64(offset)) } catch { throw .spool(path, error.reason) }
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out += $0 }
    }

    private static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    private static func int64(_ bytes: [UInt8], at offset: Int) -> Int64 {
        Int64(bitPattern: (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) })
    }

    static func errnoText() -> String {
        String(cString: strerror(errno))
    }
}

extension Selectable {
    /// What selects a message this library wrote, as muevald reads it: an event's `class` and
    /// `sensor`, a media chunk's kind; nil for anything else.
    init?(_ message: KeyValueMessage) {
        switch (message.name, message.fields["class"], message.fields["contentType"]) {
        case ("event", .string(let eventClass)?, _):
            var sensor: String?
            if case .string(let name)? = message.fields["sensor"] { sensor = name }
            self = .event(eventClass: eventClass, sensor: sensor)
        case ("media", _, .string(let contentType)?):
            guard let format = MediaFormat(contentType: contentType) else { return nil }
            self = .media(format.kind)
        default:
            return nil
        }
    }
}

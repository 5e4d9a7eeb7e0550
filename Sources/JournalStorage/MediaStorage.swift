public import MuEvalWire
public import SessionModel
internal import WireProtocol

/// Where the bytes of one stream, exported as one file, come from: the stored chunks in part order,
/// with silence where a WAV stream lost a chunk (so that what follows stays in sync with the events),
/// and the WAV header's sizes set to the file's. The console serves byte ranges of it without
/// assembling the file; `muevalctl media` writes it whole.
public struct MediaStreamLayout: Sendable {
    public struct Piece: Sendable {
        /// Where the piece begins in the file.
        public var offset: Int64
        public var length: Int64
        /// The `media` row holding the bytes; nil for silence.
        public var row: Int64?
    }

    /// The most silence, in seconds, that stands in for lost chunks in one stream. A gap between two
    /// chunks' device times beyond what is left of it (3×10⁸ s, from a clock gone wrong or a crafted
    /// stream) is not a plausible loss: it is missing, and the chunks follow each other with no silence
    /// (docs/STORAGE.md, "Media"). It bounds the exported file at its chunks plus an hour.
    public static let longestSilence: Double = 3600

    public let stream: MediaStreamRecord
    public let format: MediaFormat?
    public let pieces: [Piece]
    public var totalBytes: Int64 { pieces.last.map { $0.offset + $0.length } ?? 0 }
    /// The WAV header's size fields, rewritten: (offset in the file, little-endian UInt32).
    let patches: [(offset: Int64, value: UInt32)]
}

/// The WAV facts exporting needs from a stream's first chunk.
struct WAVHeader {
    var byteRate: Int
    var blockAlign: Int
    /// Offsets of the RIFF size and the `data` chunk's size, and where the samples begin.
    var riffSizeOffset = 4
    var dataSizeOffset: Int
    var dataOffset: Int

    /// The highest byte rate silence is made for: 192 kHz, 2 channels of 32 bits. A header claiming more
    /// is no voice recording; its gaps stay missing.
    static let highestByteRate = 1_536_000

    /// Bytes of silence, whole sample frames, for a gap of `seconds` when `budget` seconds of silence are
    /// left; 0 for a gap that is no number, not positive, or over the budget.
    func silence(seconds: Double, budget: Double) -> Int64 {
        guard seconds > 0, seconds <= budget, byteRate <= Self.highestByteRate,
              let bytes = Int64(checked: seconds * Double(byteRate)) else { return 0 }
        return bytes - bytes % Int64(blockAlign)
    }

    /// Nil when `bytes` does not begin with a RIFF/WAVE header whose `fmt ` and `data` chunks it holds.
    init?(_ bytes: [UInt8]) {
        func u32(_ at: Int) -> Int? {
            guard at + 4 <= bytes.count else { return nil }
            return Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        func tag(_ at: Int) -> String? {
            guard at + 4 <= bytes.count else { return nil }
            return String(decoding: bytes[at..<at + 4], as: UTF8.self)
        }
        guard tag(0) == "RIFF", tag(8) == "WAVE" else { return nil }
        var at = 12
        var rate: Int?
        var align: Int?
        while let name = tag(at), let size = u32(at + 4) {
            if name == "fmt " {
                rate = u32(at + 16)
                align = at + 22 <= bytes.count ? Int(bytes[at + 20]) | Int(bytes[at + 21]) << 8 : nil
            }
            if name == "data" {
                guard let rate, rate > 0, let align, align > 0 else { return nil }
                byteRate = rate
                blockAlign = align
                dataSizeOffset = at + 4
                dataOffset = at + 8
                return
            }
            at += 8 + size + (size & 1)
        }
        return nil
    }
}

extension SessionReader {
    /// Whether the file has `table`: files made before a feature lack its tables.
    func hasTable(_ table: String) throws -> Bool {
        let statement = try database.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
        defer { statement.reset() }
        statement.bind(1, table)
        return try statement.step()
    }

    /// The session's media streams, by start.
    public func mediaStreams() throws -> [MediaStreamRecord] {
        guard try hasTable("media") else { return [] }
        // A stream starts at its earliest plausible chunk (the range's start when none is: docs/STORAGE.md);
        // a total duration that is not plausible is missing.
        let ranges = ValueRanges.default
        let statement = try database.prepare("""
            SELECT device, stream, kind, content_type,
                   COALESCE(MIN(CASE WHEN start BETWEEN ?1 AND ?2 THEN start END), ?1) AS first,
                   SUM(duration), COUNT(duration), COUNT(*), MAX(part), SUM(length(bytes))
            FROM media GROUP BY device, stream ORDER BY first, device, stream
            """)
        statement.bind([.real(ranges.times.lowerBound), .real(ranges.times.upperBound)])
        var result: [MediaStreamRecord] = []
        try statement.forEachRow { row in
            let parts = row.int64(7)
            result.append(MediaStreamRecord(
                device: row.string(0) ?? "", stream: row.string(1) ?? "", kind: row.string(2) ?? "",
                contentType: row.string(3) ?? "", start: row.double(4),
                duration: row.int64(6) == parts ? ranges.duration(row.double(5)) : nil,
                parts: Int(truncatingIfNeeded: parts), missingParts: Self.missingParts(highest: row.int64(8), stored: parts),
                bytes: row.int64(9)))
        }
        return result
    }

    /// Parts 0…`highest` less the `stored` ones; 0 when the highest part is not plausible (a file from
    /// before parts were checked at the edge may say 2⁶³ − 1): no count of lost chunks is known then.
    static func missingParts(highest: Int64, stored: Int64) -> Int {
        guard ValueRanges.default.isPlausible(part: highest) else { return 0 }
        return Int(truncatingIfNeeded: max(0, highest + 1 - stored))
    }

    /// One stream's layout as a file; nil when the session has no such stream.
    public func mediaLayout(device: String, stream: String) throws -> MediaStreamLayout? {
        guard let record = try mediaStreams().first(where: { $0.device == device && $0.stream == stream }) else {
            return nil
        }
        let format = MediaFormat(contentType: record.contentType)
        let statement = try database.prepare("""
            SELECT id, part, start, length(bytes) FROM media WHERE device = ? AND stream = ? ORDER BY part
            """)
        statement.bind(1, device)
        statement.bind(2, stream)
        var rows: [(id: Int64, part: Int64, start: Double, length: Int64)] = []
        try statement.forEachRow { rows.append(($0.int64(0), $0.int64(1), $0.double(2), $0.int64(3))) }
        let header = format == .wav ? try rows.first.flatMap { try mediaBytes(row: $0.id) }.flatMap(WAVHeader.init) : nil
        var pieces: [MediaStreamLayout.Piece] = []
        var offset: Int64 = 0
        var previous: (part: Int64, start: Double, samples: Int64)?
        var silenceLeft = MediaStreamLayout.longestSilence
        for row in rows {
            if let header, let previous, previous.part.checkedAdding(1).map({ row.part > $0 }) ?? false {
                // Silence for the chunks that never came, as long as the gap in device time.
                let gap = row.start - (previous.start + Double(previous.samples) / Double(header.byteRate))
                let aligned = header.silence(seconds: gap, budget: silenceLeft)
                if aligned > 0 {
                    silenceLeft -= gap
                    pieces.append(.init(offset: offset, length: aligned, row: nil))
                    offset += aligned
                }
            }
            pieces.append(.init(offset: offset, length: row.length, row: row.id))
            offset += row.length
            let samples = row.part == 0 ? row.length - Int64(header?.dataOffset ?? 0) : row.length
            previous = (row.part, row.start, samples)
        }
        var patches: [(offset: Int64, value: UInt32)] = []
        if let header {
            patches.append((Int64(header.riffSizeOffset), UInt32(clamping: offset - 8)))
            patches.append((Int64(header.dataSizeOffset), UInt32(clamping: offset - Int64(header.dataOffset))))
        }
        return MediaStreamLayout(stream: record, format: format, pieces: pieces, patches: patches)
    }

    /// The bytes of `range` of the stream's file (an HTTP range request), read chunk by chunk.
    public func mediaBytes(_ layout: MediaStreamLayout, range: Range<Int64>) throws -> [UInt8] {
        let range = range.clamped(to: 0..<layout.totalBytes)
        var out: [UInt8] = []
        out.reserveCapacity(range.count)
        for piece in layout.pieces where piece.offset < range.upperBound && piece.offset + piece.length > range.lowerBound {
            let from = Int(truncatingIfNeeded: max(range.lowerBound, piece.offset) - piece.offset)
            let to = Int(truncatingIfNeeded: min(range.upperBound, piece.offset + piece.length) - piece.offset)
            if let row = piece.row, let bytes = try mediaBytes(row: row) {
                // A row shorter than its layout (changed under a live reader) gives what it has.
                out.append(contentsOf: Range.checked(from, min(to, bytes.count)).map { bytes[$0] } ?? [])
            } else {
                out.append(contentsOf: repeatElement(0, count: to - from))
            }
        }
        for patch in layout.patches where patch.offset >= range.lowerBound && patch.offset + 4 <= range.upperBound {
            let at = Int(truncatingIfNeeded: patch.offset - range.lowerBound)
            for index in 0..<4 where out.indices.contains(at + index) {
                out[at + index] = UInt8(truncatingIfNeeded: patch.value >> (8 * index))
            }
        }
        return out
    }

    /// Writes the whole stream's file through `write`, a chunk (or a MiB of silence) at a time: bounded memory.
    public func writeMedia(_ layout: MediaStreamLayout, to write: ([UInt8]) throws -> Void) throws {
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        for piece in layout.pieces {
            guard piece.row == nil else {
                try write(try mediaBytes(layout, range: piece.offset..<piece.offset + piece.length))
                continue
            }
            // Silence holds no header field to patch (the header is in part 0).
            var left = Int(truncatingIfNeeded: piece.length)
            while left > 0 {
                try write(left >= zeros.count ? zeros : Array(zeros[..<left]))
                left -= zeros.count
            }
        }
    }

    private func mediaBytes(row: Int64) throws -> [UInt8]? {
        let statement = try database.prepare("SELECT bytes FROM media WHERE id = ?")
        defer { statement.reset() }
        statement.bind(1, row)
        return try statement.step() ? statement.bytes(0) : nil
    }
}

extension MediaStreamRecord {
    /// The stream's file name when exported (`voice-1.wav`): its name made safe for a file system,
    /// with the device in front when another device of the session has a stream of the same name.
    public func fileName(among streams: [MediaStreamRecord]) -> String {
        func safe(_ text: String) -> String {
            let mapped = text.unicodeScalars.map { scalar -> Character in
                scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-" || scalar == "_" || scalar == "."
                    ? Character(scalar) : "_"
            }
            let name = String(mapped).trimmingPrefix(while: { $0 == "." })
            return name.isEmpty ? "stream" : String(name)
        }
        let shared = streams.contains { $0.stream == stream && $0.device != device }
        let base = shared ? safe(device) + "-" + safe(stream) : safe(stream)
        return base + "." + (MediaFormat(contentType: contentType)?.fileExtension ?? "bin")
    }
}

/// One row of `media`, as exported (`export` keeps a session's media: docs/STORAGE.md).
public struct StoredMediaChunk: Sendable, Equatable {
    public var device: String
    public var seq: Int64?
    public var stream: String
    public var kind: String
    public var contentType: String
    public var part: Int64
    public var start: Double
    public var duration: Double?
    public var received: Double
    public var bytes: [UInt8]

    public init(device: String, seq: Int64?, stream: String, kind: String, contentType: String, part: Int64, start: Double,
                duration: Double?, received: Double, bytes: [UInt8]) {
        self.device = device
        self.seq = seq
        self.stream = stream
        self.kind = kind
        self.contentType = contentType
        self.part = part
        self.start = start
        self.duration = duration
        self.received = received
        self.bytes = bytes
    }
}

extension SessionReader {
    /// Up to `limit` media chunks stored after row `afterID`, in storage order, and no more once
    /// `maxBytes` were read (one chunk at least): a session's media a page at a time.
    public func mediaPage(afterID: Int64, limit: Int, maxBytes: Int) throws -> [(id: Int64, chunk: StoredMediaChunk)] {
        guard try hasTable("media") else { return [] }
        let statement = try database.prepare("""
            SELECT id, device, seq, stream, kind, content_type, part, start, duration, received, bytes
            FROM media WHERE id > ? ORDER BY id LIMIT ?
            """)
        defer { statement.reset() }
        statement.bind([.integer(afterID), .integer(Int64(limit))])
        var result: [(id: Int64, chunk: StoredMediaChunk)] = []
        var bytes = 0
        while bytes < maxBytes, try statement.step() {
            let chunk = StoredMediaChunk(
                device: statement.string(1) ?? "", seq: statement.isNull(2) ? nil : statement.int64(2),
                stream: statement.string(3) ?? "", kind: statement.string(4) ?? "", contentType: statement.string(5) ?? "",
                part: statement.int64(6), start: statement.double(7), duration: optionalDouble(statement, 8),
                received: statement.double(9), bytes: statement.bytes(10))
            bytes += chunk.bytes.count
            result.append((statement.int64(0), chunk))
        }
        return result
    }
}

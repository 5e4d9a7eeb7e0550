/// What a media stream records: the tester's voice (think-aloud) or face.
public enum MediaKind: String, Sendable, CaseIterable, Codable {
    case audio
    case video

    /// The sensor name a session selects to record this kind (`<welcome>` tells the device).
    public var sensor: String {
        switch self {
        case .audio: "microphone"
        case .video: "faceCamera"
        }
    }
}

/// The media formats muevald stores: what phones produce and browsers play, and whose chunks
/// concatenate into one playable file (docs/PROTOCOL.md, "Media").
public enum MediaFormat: String, Sendable, CaseIterable, Codable {
    /// PCM in a RIFF/WAVE file; the first chunk carries the header (its sizes may be 0 or 0xFFFFFFFF
    /// while recording: they are set when the stream is exported).
    case wav = "audio/wav"
    /// AAC in fragmented MP4: the first chunk is the initialisation segment (`ftyp` + `moov`), each
    /// later one whole fragments (`moof` + `mdat`).
    case aacMP4 = "audio/mp4"
    /// H.264 in fragmented MP4, chunked as `aacMP4`.
    case h264MP4 = "video/mp4"

    /// The format of a `contentType` as sent: case and parameters (`; codecs=…`) are ignored, and the
    /// common aliases of WAV are accepted. Nil for anything else.
    public init?(contentType: String) {
        let essence = contentType.split(separator: ";", maxSplits: 1).first.map {
            $0.trimmingXMLWhitespace().lowercased()
        } ?? ""
        switch essence {
        case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave": self = .wav
        case "audio/mp4", "audio/aac+mp4", "audio/m4a", "audio/x-m4a": self = .aacMP4
        case "video/mp4": self = .h264MP4
        default: return nil
        }
    }

    public var kind: MediaKind {
        switch self {
        case .wav, .aacMP4: .audio
        case .h264MP4: .video
        }
    }

    /// The file name extension of an exported stream.
    public var fileExtension: String {
        switch self {
        case .wav: "wav"
        case .aacMP4: "m4a"
        case .h264MP4: "mp4"
        }
    }
}

/// The 44-byte RIFF/WAVE header of 16-bit mono PCM: what recording devices (the simulator, tests,
/// the speech benchmark) write before their samples. `dataBytes` nil writes the 0xFFFFFFFF sizes of a
/// stream still recording, which muevald sets when it writes the stream out.
public enum WAVFile {
    public static func header(sampleRate: Int, dataBytes: Int?) -> [UInt8] {
        func u32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        func u16(_ value: Int) -> [UInt8] { (0..<2).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        let unknown = 0xFFFF_FFFF
        return Array("RIFF".utf8) + u32(dataBytes.map { $0 + 36 } ?? unknown) + Array("WAVEfmt ".utf8) + u32(16) + u16(1) + u16(1)
            + u32(sampleRate) + u32(sampleRate * 2) + u16(2) + u16(16) + Array("data".utf8) + u32(dataBytes ?? unknown)
    }
}

/// One `<media>` message: a chunk of a stream a device records, stored in the session file and
/// acknowledged and de-duplicated like events (its `seq` is of the device's one sequence).
public struct WireMedia: Sendable, Equatable {
    /// The device's name for the stream, unique within its recording (e.g. `voice-1`).
    public var stream: String
    public var format: MediaFormat
    /// The chunk's number in its stream, from 0; chunks are stored and exported in this order, and a
    /// (device, stream, part) already stored is stored once.
    public var part: Int64
    /// Device time of the chunk's first sample, seconds since 1970 (the clock of the events' `timestamp`).
    public var start: Double
    /// Seconds of media in the chunk, when the device knows it.
    public var duration: Double?
    public var seq: Int64?
    public var bytes: [UInt8]

    public init(stream: String, format: MediaFormat, part: Int64, start: Double, duration: Double?, seq: Int64?,
                bytes: [UInt8]) {
        self.stream = stream
        self.format = format
        self.part = part
        self.start = start
        self.duration = duration
        self.seq = seq
        self.bytes = bytes
    }

    public var kind: MediaKind { format.kind }
}

extension Substring {
    fileprivate func trimmingXMLWhitespace() -> Substring {
        var s = self
        while let first = s.utf8.first, first.isXMLWhitespace { s = s.dropFirst() }
        while let last = s.utf8.last, last.isXMLWhitespace { s = s.dropLast() }
        return s
    }
}

extension UInt8 {
    /// Space, tab, line feed or carriage return: what XML ignores around a value.
    fileprivate var isXMLWhitespace: Bool { self == 0x20 || self == 0x09 || self == 0x0A || self == 0x0D }
}

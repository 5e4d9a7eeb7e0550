internal import MuEvalWire
internal import SessionModel
internal import WireProtocol

/// One import format's reader: streams a file's records into a draft session file.
protocol ImportReader {
    mutating func read(_ chunks: inout FileChunks, into draft: SessionDraft) throws -> ReadSummary
}

/// What an import needs to know while reading, besides the bytes.
struct ImportContext {
    /// The file's name, for errors.
    var file: String
    var limits: ImportLimits
    /// The device events are stored under when the format names none (GPX): the session's device
    /// for `--into`.
    var device: String?
}

/// What a reader learnt about the session besides its records.
struct ReadSummary {
    /// The session as an export describes it (jsonl, plist).
    var exported: ExportedSession?
    /// The device that recorded, as the file describes it.
    var device: DeviceRecord?
    /// A name for the session taken from the file (a GPX track's name), when `--name` gives none.
    var name: String?
    /// Why only part of the file was taken.
    var cutShort: String?
    /// Recordings the file names (IMUT's screen and front-camera videos), to attach when given.
    var recordings: [NamedRecording] = []
}

/// A video a log says was recorded alongside it: the file's name and where it sits on the log's clock.
struct NamedRecording: Equatable {
    var file: String
    /// `screen` or `frontCamera`.
    var recorder: String
    var start: Double
    var duration: Double?
}

extension PlistValue {
    /// "a string", "an integer"…: what a value was, in an error about what it should have been.
    var kindDescription: String {
        switch self {
        case .string: "a string"
        case .integer: "an integer"
        case .real: "a real"
        case .bool: "a boolean"
        case .date: "a date"
        case .data: "data"
        case .array: "an array"
        case .dict: "an object"
        }
    }
}

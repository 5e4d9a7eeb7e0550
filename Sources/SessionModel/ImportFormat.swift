/// The kinds of file `muevalctl import` reads (docs/IMPORT.md).
public enum ImportFormat: String, Sendable, CaseIterable, Codable {
    /// The JSON log of the IMUT framework (seed 004), finished or left as a `.tmp` log.
    case imut
    /// A GPX 1.1 track: its points become location events.
    case gpx
    /// muEval's own `export --format jsonl`.
    case jsonl
    /// muEval's own `export --format plist`.
    case plist
}

/// A file a session was made from (or merged with): what the catalog and the session file keep of it,
/// so that the same file is not imported twice unnoticed and a session says where it came from.
public struct SessionImportRecord: Codable, Sendable, Equatable {
    /// The file's name, without its directory.
    public var file: String
    public var format: ImportFormat
    /// SHA-256 of the file's bytes, in hex.
    public var sha256: String
    /// When it was imported (seconds since 1970).
    public var imported: Double
    /// Events it added.
    public var events: Int64
    /// Why only part of the file was taken (an unfinished log), when that is so.
    public var cutShort: String?

    public init(file: String, format: ImportFormat, sha256: String, imported: Double, events: Int64, cutShort: String? = nil) {
        self.file = file
        self.format = format
        self.sha256 = sha256
        self.imported = imported
        self.events = events
        self.cutShort = cutShort
    }
}

/// One file imported: the session it became (or was merged into) and what it brought.
public struct ImportOutcome: Codable, Sendable, Equatable {
    public var session: SessionRecord
    public var file: String
    public var format: ImportFormat
    public var events: Int64
    /// Media chunks stored (an export's, or the recordings attached).
    public var mediaChunks: Int
    /// Recordings attached, by file name.
    public var attached: [String]
    /// Why only part of the file was taken.
    public var cutShort: String?
    /// Where an export came from, and whether the session kept its uuid; nil for logs and tracks.
    public var origin: ExportOrigin?

    public init(session: SessionRecord, file: String, format: ImportFormat, events: Int64, mediaChunks: Int, attached: [String],
                cutShort: String?, origin: ExportOrigin? = nil) {
        self.session = session
        self.file = file
        self.format = format
        self.events = events
        self.mediaChunks = mediaChunks
        self.attached = attached
        self.cutShort = cutShort
        self.origin = origin
    }
}

/// The session an export describes, as `import` took it: a session keeps its uuid only in the lab it
/// came from, so that the shared PostgreSQL never sees two labs' sessions under one uuid (docs/IMPORT.md).
public struct ExportOrigin: Codable, Sendable, Equatable {
    public enum Identity: String, Codable, Sendable {
        /// The session kept the export's uuid: an export of this lab that its catalog does not have.
        case kept
        /// A new uuid: another lab exported it.
        case otherLab = "other-lab"
        /// A new uuid: the export does not say which lab made it (an older muEval).
        case unknownLab = "unknown-lab"
        /// A new uuid: this catalog has a session with the export's uuid already.
        case taken
    }

    /// The session's uuid in the file.
    public var uuid: String
    /// The lab that exported it, when the export says.
    public var lab: String?
    public var identity: Identity

    public init(uuid: String, lab: String?, identity: Identity) {
        self.uuid = uuid
        self.lab = lab
        self.identity = identity
    }
}

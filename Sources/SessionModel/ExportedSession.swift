/// The first record of an export (`export --format jsonl|plist`): the session as its file describes
/// it, so that `muevalctl import` makes the same session of it (docs/IMPORT.md).
public struct ExportedSession: Codable, Sendable, Equatable {
    /// The export's own version: 1.
    public var version: Int
    public var uuid: String
    /// The lab that exported it (`storage.postgres.lab`, by default the host name): an import into
    /// another lab gives the session a uuid of its own (docs/IMPORT.md). Nil in older exports.
    public var lab: String?
    public var name: String
    public var testUser: String?
    public var notes: String?
    public var sensors: [String]
    public var boundDevice: String?
    public var device: String?
    public var created: Double
    public var started: Double?
    public var stopped: Double?
    public var filtered: Int64
    public var duplicates: Int64
    public var devices: [DeviceRecord]
    public var gaps: [SessionGap]
    /// The study, iteration, participant and tasks the session recorded, when it was part of one.
    public var study: StudyContext?
    /// The files the session was itself imported from.
    public var imports: [SessionImportRecord]?

    public static let currentVersion = 1

    public init(session: SessionRecord, lab: String, devices: [DeviceRecord], gaps: [SessionGap], study: StudyContext?) {
        version = Self.currentVersion
        uuid = session.uuid
        self.lab = lab
        name = session.name
        testUser = session.testUser
        notes = session.notes
        sensors = session.sensors
        boundDevice = session.boundDevice
        device = session.device
        created = session.created
        started = session.started
        stopped = session.stopped
        filtered = session.filtered
        duplicates = session.duplicates
        self.devices = devices
        self.gaps = gaps
        self.study = study
        imports = session.imports
    }
}
